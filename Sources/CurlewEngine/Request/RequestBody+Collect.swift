// Curlew — a request body's bytes gathered in memory, for tests and recorded traffic.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

extension RequestBody {
    /// The bytes the body sends, gathered in memory: a file is read, a stream's producer is run (once more:
    /// call it only for a stream that can be produced again, or one you no longer send). Trailers are not
    /// included. For tests and recorded traffic: a test double (`MockTransport`) sees a multipart form with a
    /// file part as a body of bytes and files; this shows its exact bytes.
    ///
    /// - Parameter limit: The most bytes to gather.
    /// - Throws: ``TransportError/Code/bodyLengthMismatch`` past `limit`; ``TransportError/Code/invalidBody``
    ///   for a file that cannot be read; what the producer throws, as it threw it.
    public func collect(upTo limit: Int) async throws -> Data {
        switch storage {
        case .bytes(let data):
            guard data.count <= limit else { throw Self.tooLong(limit) }
            return data
        case .file(let region):
            guard region.length <= limit else { throw Self.tooLong(limit) }
            return try Self.read(region)
        case .segments(let segments):
            guard (knownLength ?? 0) <= limit else { throw Self.tooLong(limit) }
            var data = Data()
            for segment in segments {
                switch segment {
                case .bytes(let bytes): data += bytes
                case .file(let region): data += try Self.read(region)
                }
            }
            return data
        case .stream(let producer):
            let gathered = Locked(Data())
            try await producer.produce(
                RequestBodyWriter { chunk throws(TransportError) in
                    try gathered.withLock { (data: inout Data) throws(TransportError) in
                        guard data.count + chunk.count <= limit else { throw Self.tooLong(limit) }
                        data.append(contentsOf: chunk)
                    }
                })
            return gathered.withLock { $0 }
        }
    }

    /// The bytes of a file region.
    private static func read(_ region: FileRegion) throws(TransportError) -> Data {
        guard region.length > 0 else { return Data() }
        let descriptor = open(region.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TransportError(.invalidBody, message: "cannot read the file \(region.path): \(FileRegion.describe(errno))")
        }
        defer { close(descriptor) }
        var data = Data(count: region.length)
        let (read, error) = data.withUnsafeMutableBytes { buffer -> (read: Int, error: Int32) in
            guard let base = buffer.baseAddress else { return (0, EINVAL) }
            return region.read(descriptor, into: base, count: region.length, at: 0)
        }
        guard error == 0 else {
            throw TransportError(.invalidBody, message: "reading \(region.path) failed: \(FileRegion.describe(error))")
        }
        guard read == region.length else {
            throw TransportError(
                .bodyLengthMismatch,
                message: "\(region.path) ended after \(read) of the \(region.length) bytes it had when the body was made")
        }
        return data
    }

    private static func tooLong(_ limit: Int) -> TransportError {
        TransportError(.bodyLengthMismatch, message: "the body has more than the \(limit) bytes asked for")
    }
}
