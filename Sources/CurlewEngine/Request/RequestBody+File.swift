// Curlew — a request body read from a file while the request runs.

#if canImport(Glibc)
import Glibc
#endif

extension TransportRequest.Body {
    /// A body read from the file at `path` (or the bytes of `range` in it) while the request runs.
    ///
    /// The file is checked now: it must be a regular file this process can read, and `range` must lie
    /// within it; its length is taken now and sent as `Content-Length`. The file is opened again for each
    /// attempt (a 307 or 308 redirect, a retry on a fresh connection) and read in place into libcurl's
    /// upload buffer on the session's event loop, so a file on a slow or network file system delays every
    /// transfer of the session: send such a file as a ``stream(length:replayable:_:)``. A file that is
    /// shorter or longer than that length when it is sent fails the request with
    /// ``TransportError/Code/bodyLengthMismatch``, and one removed while it is sent with
    /// ``TransportError/Code/invalidBody``, before its last byte goes out; nothing beyond the length is
    /// sent.
    ///
    /// - Parameters:
    ///   - path: The file's path.
    ///   - range: Byte offsets within the file; nil for the whole file.
    /// - Throws: ``TransportError/Code/invalidBody`` when the file cannot be read or the range does not
    ///   lie within it.
    public static func file(_ path: String, range: Range<Int>? = nil) throws(TransportError) -> TransportRequest.Body {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw TransportError(.invalidBody, message: "cannot read the file \(path): \(FileRegion.describe(errno))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw TransportError(.invalidBody, message: "\(path) is not a regular file")
        }
        guard access(path, R_OK) == 0 else {
            throw TransportError(.invalidBody, message: "cannot read the file \(path): \(FileRegion.describe(errno))")
        }
        let size = Int(info.st_size)
        let region = range ?? 0..<size
        guard region.lowerBound >= 0, region.upperBound <= size else {
            throw TransportError(
                .invalidBody, message: "the range \(region) is not within \(path), which has \(size) bytes")
        }
        return TransportRequest.Body(
            storage: .file(
                FileRegion(path: path, offset: region.lowerBound, length: region.count, wholeFile: range == nil)))
    }
}

extension TransportRequest.Body {
    /// Reads a file body's bytes in large chunks on the calling task (never the event loop) and hands each
    /// to `take`: for code that sends a file inside a body of its own (a multipart form with stream parts).
    /// A file removed, shorter or longer than when the body was made fails as the engine's read of a file
    /// body does, with the same codes and messages.
    ///
    /// - Throws: ``TransportError/Code/invalidBody``, ``TransportError/Code/bodyLengthMismatch``, what `take`
    ///   throws; ``TransportError/Code/invalidBody`` for a body that is not a file.
    package func readFileInChunks(_ take: (ArraySlice<UInt8>) async throws(TransportError) -> Void) async throws(TransportError) {
        guard case .file(let region) = storage else { throw TransportError(.invalidBody, message: "\(self) is not a file body") }
        try await Self.readFile(region, take)
    }

    /// Reads a file region in large chunks, on the calling task, checking that the file still has the
    /// length it had when the body was made.
    static func readFile(
        _ region: FileRegion, _ take: (ArraySlice<UInt8>) async throws(TransportError) -> Void
    ) async throws(TransportError) {
        let descriptor = open(region.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TransportError(.invalidBody, message: "cannot open \(region.path): \(FileRegion.describe(errno))")
        }
        defer { close(descriptor) }
        let chunkSize = 1 << 20
        var offset = 0
        while offset < region.length {
            let wanted = min(chunkSize, region.length - offset)
            var outcome = (read: 0, error: Int32(0))
            let chunk = [UInt8](unsafeUninitializedCapacity: wanted) { buffer, count in
                if let base = buffer.baseAddress { outcome = region.read(descriptor, into: base, count: wanted, at: offset) }
                count = outcome.read
            }
            if outcome.error != 0 {
                throw TransportError(.invalidBody, message: "reading \(region.path) failed: \(FileRegion.describe(outcome.error))")
            }
            guard chunk.count == wanted else {
                throw TransportError(
                    .bodyLengthMismatch,
                    message: "\(region.path) ended after \(offset + chunk.count) of the \(region.length) bytes it had when the body was made")
            }
            offset += chunk.count
            try await take(chunk[...])
        }
        if let change = region.changeAtEnd(descriptor) { throw TransportError(change.code, message: change.message) }
    }
}

/// A file, or part of one, sent as a request body.
struct FileRegion: Sendable, Hashable {
    let path: String
    let offset: Int
    let length: Int
    /// Whether the body is the whole file (then the file must still have exactly `length` bytes).
    let wholeFile: Bool

    /// Reads up to `count` bytes of the region from its byte `position` into `buffer`, until they are all
    /// read or the file ends. Returns how many were read and, when reading failed, the errno.
    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at position: Int) -> (read: Int, error: Int32) {
        var read = 0
        while read < count {
            let result = pread(descriptor, buffer + read, count - read, off_t(offset + position + read))
            if result < 0, errno == EINTR { continue }
            if result < 0 { return (read, errno) }
            if result == 0 { break }
            read += result
        }
        return (read, 0)
    }

    /// What went wrong with the file while its last bytes were read: removed (its last name unlinked),
    /// or, for a whole file, grown or shrunk since the body was made. Nil when it is as it was.
    func changeAtEnd(_ descriptor: Int32) -> (code: TransportError.Code, message: String)? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        if info.st_nlink == 0 {
            return (.invalidBody, "\(path) was removed while it was being sent")
        }
        if wholeFile, Int(info.st_size) != length {
            return (.bodyLengthMismatch, "\(path) has \(info.st_size) bytes, not the \(length) it had when the body was made")
        }
        return nil
    }

    /// `strerror` for an errno value.
    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
