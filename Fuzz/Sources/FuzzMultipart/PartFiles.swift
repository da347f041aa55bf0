// The files of an input's file parts, and the dump of what each input produced (FUZZ_MULTIPART_DUMP).

import Curlew
import Foundation
import FuzzSupport
import Glibc

/// Where file parts are written: a directory of this process (in memory when /dev/shm is there: a file
/// made and removed on disk costs milliseconds), one subdirectory per part (two parts may name the same
/// file). Removed when the process exits (not when it aborts).
private let filesPath = (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") + "/fuzzmp-files-\(getpid())"

private let filesDirectory: String = {
    for index in 0..<8 {
        try? FileManager.default.createDirectory(atPath: "\(filesPath)/\(index)", withIntermediateDirectories: true)
    }
    atexit {
        for index in 0..<8 { rmdir("\(filesPath)/\(index)") }
        rmdir(filesPath)
    }
    return filesPath
}()

/// An input's file parts on disk, removed with `remove()`.
struct PartFiles {
    private var paths: [Int: String] = [:]

    init(_ form: FormInput) {
        for (index, part) in form.parts.enumerated() {
            guard let name = part.fileOnDisk else { continue }
            let path = "\(filesDirectory)/\(index)/\(name)"
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            expect(descriptor >= 0, "cannot create \(path.debugDescription): \(String(cString: strerror(errno)))")
            let written = part.data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            expect(written == part.data.count, "cannot write \(path.debugDescription)")
            close(descriptor)
            paths[index] = path
        }
    }

    /// The file URL of part `index`'s file.
    func url(_ index: Int) -> URL { URL(fileURLWithPath: paths[index] ?? "") }

    func remove() {
        for path in paths.values { unlink(path) }
    }
}

/// The dump for Fuzz/Scripts/multipart_compare.py: for each input, `<hash>.body` (the body, accepted
/// forms only) and `<hash>.json` (the Content-Type, the boundary, the parts as they must be read: names
/// and file names as sent and as given, the Content-Type, the bytes in hex; whether the parts are kept
/// apart; or the refusal).
enum Dump {
    private static let directory: String? = ProcessInfo.processInfo.environment["FUZZ_MULTIPART_DUMP"].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// `keptApart`: false when a file part holds the boundary (the caller's promise broken: no parts to
    /// compare).
    static func accepted(_ input: [UInt8], body: [UInt8], contentType: String, boundary: String, form: FormInput, keptApart: Bool) {
        guard let directory else { return }
        let stem = "\(directory)/\(hash(input))"
        let parts: [[String: Any]] = form.parts.map { part in
            [
                "name": part.name, "name_wire": String(decoding: wireEscaped(part.name), as: UTF8.self),
                "filename": orNull(part.fileName), "filename_wire": orNull(part.fileName.map { String(decoding: wireEscaped($0), as: UTF8.self) }),
                "content_type": orNull(part.mimeType), "data_hex": hex(part.data), "file": part.fileOnDisk != nil,
            ]
        }
        write(["content_type": contentType, "boundary": boundary, "parts": parts, "kept_apart": keptApart], to: stem)
        expect(FileManager.default.createFile(atPath: stem + ".body", contents: Data(body)), "cannot write \(stem).body")
    }

    static func refusal(_ input: [UInt8], _ error: MultipartEncodingError) {
        guard let directory else { return }
        write(["refused": error.description], to: "\(directory)/\(hash(input))")
    }

    private static func write(_ object: [String: Any], to stem: String) {
        do {
            let json = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            expect(FileManager.default.createFile(atPath: stem + ".json", contents: json), "cannot write \(stem).json")
        } catch {
            expectationFailed("dump: \(error)")
        }
    }

    private static func orNull(_ value: String?) -> Any { value.map { $0 as Any } ?? NSNull() }

    /// FNV-1a, 64 bits: a stable name for an input.
    private static func hash(_ input: [UInt8]) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in input { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return String(decoding: text, as: UTF8.self)
    }
}
