// Curlew — a request body's bytes gathered in memory, for tests and recorded traffic.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension TransportRequest.Body {
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
            return try await Self.read(region)
        case .segments(let segments):
            guard (knownLength ?? 0) <= limit else { throw Self.tooLong(limit) }
            var data = Data()
            for segment in segments {
                switch segment {
                case .bytes(let bytes): data += bytes
                case .file(let region): data += try await Self.read(region)
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

    /// The bytes of a file region, read as a file body is (the same checks and failures).
    private static func read(_ region: FileRegion) async throws(TransportError) -> Data {
        var data = Data(capacity: region.length)
        try await readFile(region) { chunk throws(TransportError) in data.append(contentsOf: chunk) }
        return data
    }

    private static func tooLong(_ limit: Int) -> TransportError {
        TransportError(.bodyLengthMismatch, message: "the body has more than the \(limit) bytes asked for")
    }
}
