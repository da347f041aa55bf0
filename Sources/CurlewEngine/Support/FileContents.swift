// Curlew — a whole file read into memory, without the allocation Foundation loses on an empty file.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

package enum FileContents {
    /// The bytes of the file at `path`, as `Data(contentsOf:)` reads them, with its errors.
    ///
    /// On Linux, FoundationEssentials reads a file that reports a size of 0 through a 4 KiB buffer in
    /// case it is a /proc file, and when nothing comes it returns an empty `Data` without freeing that
    /// buffer (`readBytesFromFile`, swift-foundation as of Swift 6.3; found by LeakSanitizer). An empty
    /// regular file is therefore answered here, without Foundation.
    package static func read(atPath path: String) throws -> Data {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size == 0 { return Data() }
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }
}
