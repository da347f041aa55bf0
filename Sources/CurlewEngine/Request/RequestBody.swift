// Curlew — what a request sends as its body: bytes, a file, or bytes produced while the request runs.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

extension TransportRequest {
    /// The body of a request.
    ///
    /// - Bytes in memory (``data(_:)``, ``bytes(_:)``, ``string(_:)``) are handed to libcurl without copying.
    /// - A file (``file(_:range:)``) is read while the request runs, straight into libcurl's upload buffer;
    ///   its length is known, so it is sent with `Content-Length`.
    /// - A stream (``stream(length:replayable:_:)``, ``sequence(_:length:)``, ``sequence(length:_:)``) is
    ///   produced by your code while the request runs, with backpressure: a write waits while the engine's
    ///   buffer is full. A stream of unknown length is sent chunked over HTTP/1.1.
    ///
    /// Any body can carry trailer fields (``trailers(_:)-(HTTPFields)``), sent after its last byte.
    ///
    /// Bodies in memory and files can be sent again (after a 307 or 308 redirect, or when libcurl retries a
    /// request whose reused connection turned out dead); a stream can when it is ``isReplayable``.
    public struct Body: Sendable, Hashable {
        enum Storage: Sendable, Hashable {
            case bytes(Data)
            case file(FileRegion)
            case stream(BodyProducer)
            /// Bytes and files one after the other (a multipart form), read in place as files are.
            case segments([BodySegment])
        }

        /// Bytes without trailers inline; anything else boxed. A request carries its body in every copy
        /// made on the way to the loop: a body no larger than `Data` keeps those copies cheap.
        private enum Representation: Sendable, Hashable {
            case bytes(Data)
            indirect case other(Storage, trailers: TrailerSource?)
        }

        private let representation: Representation

        init(storage: Storage, trailers: TrailerSource? = nil) {
            if case .bytes(let data) = storage, trailers == nil {
                representation = .bytes(data)
            } else {
                representation = .other(storage, trailers: trailers)
            }
        }

        var storage: Storage {
            switch representation {
            case .bytes(let data): .bytes(data)
            case .other(let storage, _): storage
            }
        }

        /// The trailer fields, when the body declares them.
        var trailerSource: TrailerSource? {
            if case .other(_, let trailers) = representation { return trailers }
            return nil
        }

        /// A body made of these bytes.
        public static func data(_ data: Data) -> TransportRequest.Body { TransportRequest.Body(storage: .bytes(data)) }

        /// A body made of these bytes.
        public static func bytes(_ bytes: some Sequence<UInt8>) -> TransportRequest.Body { .data(Data(bytes)) }

        /// A body holding the UTF-8 bytes of `string`.
        public static func string(_ string: String) -> TransportRequest.Body { .data(Data(string.utf8)) }

        /// A body produced while the request runs by `produce`, which writes its bytes to the writer it is
        /// given and returns when the body is complete.
        ///
        /// A write waits while the engine holds as much as ``SessionConfiguration/requestBodyBufferSize`` of
        /// unsent bytes, so a fast producer never outruns the network. When `produce` throws, the request
        /// fails with its error (``TransportError/Code/requestBodyFailed`` from `execute`) and nothing more is
        /// sent. When the exchange ends first (a response arrived early, the caller stopped), the writer's
        /// next write throws ``TransportError/Code/cancelled`` and the task producing is cancelled.
        ///
        /// - Parameters:
        ///   - length: The exact number of bytes `produce` writes, sent as `Content-Length`; nil for a length
        ///     not known up front (chunked over HTTP/1.1). Producing more or fewer bytes fails with
        ///     ``TransportError/Code/bodyLengthMismatch``.
        ///   - replayable: Whether calling `produce` again writes the same bytes, so the body can be sent
        ///     again after a 307 or 308 redirect or a retry on a fresh connection. A body that is not fails
        ///     those with ``TransportError/Code/bodyNotReplayable``.
        ///   - produce: Writes the body; called on the calling task's side, never on the event loop.
        public static func stream(
            length: Int? = nil, replayable: Bool = false,
            _ produce: @escaping @Sendable (RequestBodyWriter) async throws -> Void
        ) -> TransportRequest.Body {
            TransportRequest.Body(storage: .stream(BodyProducer(length: length, replayable: replayable, produce: produce)))
        }

        /// A body made of the chunks of `sequence`, read once while the request runs (it cannot be replayed:
        /// use ``sequence(length:_:)`` for one that can).
        ///
        /// - Parameters:
        ///   - sequence: Chunks of bytes (`[UInt8]`, `ArraySlice<UInt8>`, `Data`, ...).
        ///   - length: The exact number of bytes, sent as `Content-Length`; nil for unknown (chunked).
        public static func sequence<Chunks: AsyncSequence & Sendable>(
            _ sequence: Chunks, length: Int? = nil
        ) -> TransportRequest.Body where Chunks.Element: Collection<UInt8> & Sendable {
            stream(length: length, replayable: false) { writer in
                for try await chunk in sequence { try await writer.write(chunk) }
            }
        }

        /// A body made of the chunks of the sequences `makeSequence` returns: called for each attempt, so
        /// the body can be sent again.
        ///
        /// - Parameters:
        ///   - length: The exact number of bytes, sent as `Content-Length`; nil for unknown (chunked).
        ///   - makeSequence: Returns the chunks from the first byte, each time it is called.
        public static func sequence<Chunks: AsyncSequence & SendableMetatype>(
            length: Int? = nil, _ makeSequence: @escaping @Sendable () -> Chunks
        ) -> TransportRequest.Body where Chunks.Element: Collection<UInt8> & Sendable, Chunks.AsyncIterator: SendableMetatype {
            stream(length: length, replayable: true) { writer in
                for try await chunk in makeSequence() { try await writer.write(chunk) }
            }
        }

        /// This body followed by trailer fields, sent after its last byte.
        ///
        /// Trailers need chunked framing: the body is sent without `Content-Length`, and over HTTP/1.1 —
        /// libcurl sends trailers only in chunked HTTP/1.1 uploads, so a request with trailers to an https host
        /// goes over a connection speaking HTTP/1.1.
        ///
        /// - Parameter makeTrailers: Returns the fields. For a stream it runs after the producer has
        ///   returned (so it can report what was produced, a checksum say); for bytes and files, whose
        ///   content is known up front, before the request is sent. A field that frames, routes,
        ///   authenticates or describes the content of the message (`Content-Length`, `Transfer-Encoding`,
        ///   `Trailer`, `Host`, `Authorization`, `Content-Type`, ...) fails the request with
        ///   ``TransportError/Code/invalidHeader``.
        public func trailers(_ makeTrailers: @escaping @Sendable () async throws -> HTTPFields) -> TransportRequest.Body {
            TransportRequest.Body(storage: storage, trailers: TrailerSource(makeTrailers))
        }

        /// This body followed by these trailer fields, sent after its last byte (see ``trailers(_:)-(()->HTTPFields)``).
        ///
        /// - Parameter fields: The fields; refused when the request is sent (``TransportError/Code/invalidHeader``)
        ///   if one frames, routes, authenticates or describes the content of the message.
        public func trailers(_ fields: HTTPFields) -> TransportRequest.Body {
            TransportRequest.Body(storage: storage, trailers: TrailerSource(fields: fields))
        }

        /// The number of bytes the body will send, when known before sending.
        public var knownLength: Int? {
            switch storage {
            case .bytes(let data): data.count
            case .file(let region): region.length
            case .stream(let producer): producer.length
            case .segments(let segments): segments.reduce(0) { $0 + $1.length }
            }
        }

        /// The bodies one after the other, as one body read in place (bytes from memory, files straight into
        /// libcurl's buffer on the event loop, as ``file(_:range:)`` is): for encoders that frame files with
        /// bytes of their own (a multipart form). Nil when one of them is a stream or has trailers.
        package static func concatenating(_ bodies: [TransportRequest.Body]) -> TransportRequest.Body? {
            var segments: [BodySegment] = []
            for body in bodies {
                guard !body.hasTrailers else { return nil }
                switch body.storage {
                case .bytes(let data):
                    guard !data.isEmpty else { continue }
                    // Adjacent small bytes become one segment; large ones keep their own storage.
                    if case .bytes(let previous) = segments.last, previous.count + data.count < 64 * 1024 {
                        segments[segments.count - 1] = .bytes(previous + data)
                    } else {
                        segments.append(.bytes(data))
                    }
                case .file(let region): segments.append(.file(region))
                case .segments(let more): segments += more
                case .stream: return nil
                }
            }
            return TransportRequest.Body(storage: .segments(segments))
        }

        /// Whether the body can be sent again (after a 307 or 308 redirect, or a retry on a fresh
        /// connection): bytes and files can; a stream when it said so.
        public var isReplayable: Bool {
            switch storage {
            case .bytes, .file, .segments: true
            case .stream(let producer): producer.replayable
            }
        }

        /// The bytes, when the body is held in memory.
        public var inMemoryBytes: Data? {
            switch representation {
            case .bytes(let data): data
            case .other(.bytes(let data), _): data
            case .other: nil
            }
        }

        /// Whether the body sends trailer fields after its last byte.
        public var hasTrailers: Bool { trailerSource != nil }

        /// The file the body is read from, if it is one.
        public var filePath: String? {
            if case .file(let region) = storage { return region.path }
            return nil
        }

        /// Whether libcurl reads this body through the read callback: anything but bytes without trailers,
        /// which it is given whole.
        var isReadByCallback: Bool {
            if case .bytes = storage { return hasTrailers }
            return true
        }

        /// Whether the body is produced while the request runs (a stream).
        var isStream: Bool {
            if case .stream = storage { return true }
            return false
        }
    }
}

extension TransportRequest.Body: CustomStringConvertible {
    /// What the body is, for logs: `12 bytes`, `file /tmp/a.bin (bytes 0..<1024)`, `stream of 4096 bytes`,
    /// `stream of unknown length`, with `, with trailers` when it has them.
    public var description: String {
        let kind =
            switch storage {
            case .bytes(let data): "\(data.count) bytes"
            case .file(let region): "file \(region.path) (bytes \(region.offset)..<\(region.offset + region.length))"
            case .stream(let producer): producer.length.map { "stream of \($0) bytes" } ?? "stream of unknown length"
            case .segments(let segments):
                Self.describe(segments)
            }
        return hasTrailers ? kind + ", with trailers" : kind
    }
}

extension TransportRequest.Body {
    /// `120 bytes in memory and 2 files (1048576 bytes: /a.bin, /b.bin)`.
    fileprivate static func describe(_ segments: [BodySegment]) -> String {
        var inMemory = 0
        var fileBytes = 0
        var paths: [String] = []
        for segment in segments {
            switch segment {
            case .bytes(let data): inMemory += data.count
            case .file(let region):
                fileBytes += region.length
                paths.append(region.path)
            }
        }
        let files = paths.count == 1 ? "1 file" : "\(paths.count) files"
        return "\(inMemory) bytes in memory and \(files) (\(fileBytes) bytes: \(paths.joined(separator: ", ")))"
    }
}

/// A piece of a body made of segments: bytes, or a region of a file.
enum BodySegment: Sendable, Hashable {
    case bytes(Data)
    case file(FileRegion)

    var length: Int {
        switch self {
        case .bytes(let data): data.count
        case .file(let region): region.length
        }
    }
}

/// A stream body's producer, compared by identity (two bodies are equal when they share it).
final class BodyProducer: Sendable, Hashable {
    let length: Int?
    let replayable: Bool
    let produce: @Sendable (RequestBodyWriter) async throws -> Void

    init(length: Int?, replayable: Bool, produce: @escaping @Sendable (RequestBodyWriter) async throws -> Void) {
        self.length = length.map { max(0, $0) }
        self.replayable = replayable
        self.produce = produce
    }

    static func == (lhs: BodyProducer, rhs: BodyProducer) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A body's trailer fields, compared by identity.
final class TrailerSource: Sendable, Hashable {
    let make: @Sendable () async throws -> HTTPFields
    /// Fields given as a value rather than computed (checked before anything is sent).
    let declared: HTTPFields?

    init(_ make: @escaping @Sendable () async throws -> HTTPFields) {
        self.make = make
        declared = nil
    }

    init(fields: HTTPFields) {
        self.make = { fields }
        declared = fields
    }

    static func == (lhs: TrailerSource, rhs: TrailerSource) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// Fields that frame, route, authenticate or describe the content of a message, which may not be sent
    /// as trailers (RFC 9110 §6.5.1).
    static let forbidden: Set<HTTPField.Name> = {
        var names: Set<HTTPField.Name> = [
            .contentLength, .transferEncoding, .trailer, .contentEncoding, .contentType, .contentRange, .te,
            .authorization, .proxyAuthorization, .setCookie, .cookie, .expect, .connection, .upgrade,
        ]
        if let host = HTTPField.Name("Host") { names.insert(host) }
        return names
    }()
}
