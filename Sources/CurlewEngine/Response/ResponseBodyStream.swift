// Curlew — a response body read as it arrives: an async sequence of chunks, read once.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// The body of a streamed response, as chunks of bytes in the order they arrive.
///
/// Iterate it once, inside the closure it was handed to (``CurlSession/perform(_:isolation:_:)``), or
/// after detaching it (``detach()``); a second iteration, or one after the closure has returned, throws
/// ``TransportError/Code/bodyUnavailable``. Each chunk holds at most the session's receive buffer
/// (``SessionConfiguration/receiveBufferSize``); a `gzip` or `deflate` body is decoded as it is read.
///
/// While you do not read, the engine holds at most ``SessionConfiguration/streamBufferSize`` unread
/// bytes and then stops reading the socket, so the server slows down to your pace; holding a stream is
/// never an idle timeout. Stop early simply by returning from the closure: the transfer is aborted and
/// its connection closed. Trailer fields arrive after the last chunk (``trailerFields``).
public struct ResponseBodyStream: AsyncSequence, Sendable {
    public typealias Element = ArraySlice<UInt8>
    public typealias Failure = TransportError

    let source: BodySource
    /// Boxed: a body is held across waits by every frame it passes through, so it stays two words.
    private let complete: CompleteResponse?

    /// For a body handed out from a complete response (``init(response:)``), that response: a buffered
    /// caller takes it as it is instead of reading the chunks.
    package var completeResponse: TransportResponse? { complete?.response }

    private final class CompleteResponse: Sendable {
        let response: TransportResponse
        init(_ response: TransportResponse) { self.response = response }
    }

    init(_ source: BodySource) {
        self.source = source
        complete = nil
    }

    /// A body that hands out a complete response's body, in chunks of at most 64 KiB, followed by its
    /// trailer fields.
    public init(response: TransportResponse) {
        source = BodySource(.buffered(response.body, chunkSize: 64 * 1024, trailers: response.trailerFields))
        complete = CompleteResponse(response)
    }

    /// A body that hands out `data` (for stubs and test transports), in chunks of at most `chunkSize`
    /// bytes, followed by `trailers`.
    public init(data: Data, trailers: HTTPFields? = nil, chunkSize: Int = 64 * 1024) {
        source = BodySource(.buffered(data, chunkSize: Swift.max(1, chunkSize), trailers: trailers))
        complete = nil
    }

    /// A body that hands out the chunks of `chunks` as they come: a body from another library (an OpenAPI
    /// `HTTPBody`), or one a middleware made. Read once, like every body.
    ///
    /// A failure of the sequence fails the read with ``TransportError/Code/invalidResponse``, the error as
    /// its ``TransportError/underlying`` (a ``TransportError`` is thrown as it is).
    ///
    /// - Parameters:
    ///   - chunks: The body's bytes, in order.
    ///   - expectedLength: The number of bytes, when known (``expectedLength``).
    public init<Chunks: AsyncSequence & Sendable>(chunks: Chunks, expectedLength: Int? = nil)
    where Chunks.Element == ArraySlice<UInt8> {
        source = BodySource(.sequence(ChunkSequenceReader(chunks)), expectedLength: expectedLength)
        complete = nil
    }

    /// Marks the end of the scope the body was handed out for: later reads fail with
    /// ``TransportError/Code/bodyUnavailable`` (unless the body was detached).
    package func endScope() { source.endScope() }

    public func makeAsyncIterator() -> Iterator {
        Iterator(source: source, refusal: source.beginIteration())
    }

    /// The trailer fields that followed the last chunk: nil until the body has been read to its end, and
    /// when the response had none.
    public var trailerFields: HTTPFields? { source.trailers }

    /// The body's length as the server announced it (`Content-Length`), when the bytes are handed out as
    /// sent (no `Content-Encoding` is decoded); nil otherwise.
    public var expectedLength: Int? { source.expectedLength }

    /// Reads the whole body into memory.
    ///
    /// - Parameter limit: Most bytes accepted.
    /// - Throws: ``TransportError/Code/bodyTooLarge`` before reading anything when the announced length
    ///   exceeds `limit`, or as soon as the bytes read do; the transfer is then aborted. Any error the
    ///   iteration throws.
    public func collect(upTo limit: Int) async throws(TransportError) -> Data {
        if let announced = expectedLength, announced > limit {
            source.abandon()
            throw TransportError(.bodyTooLarge, message: "the response announces \(announced) bytes; the limit is \(limit)")
        }
        var data = Data()
        if let announced = expectedLength { data.reserveCapacity(announced) }
        var iterator = makeAsyncIterator()
        while let chunk = try await iterator.next() {
            guard data.count + chunk.count <= limit else {
                source.abandon()
                throw TransportError(.bodyTooLarge, message: "the response body exceeds the limit of \(limit) bytes")
            }
            data.append(contentsOf: chunk)
        }
        return data
    }

    /// Reads the chunks of a ``ResponseBodyStream``.
    public struct Iterator: AsyncIteratorProtocol {
        let source: BodySource
        /// Why the body cannot be read (boxed: the iterator is held across waits, so it stays small).
        private let refusal: Refusal?
        private var decoder: ContentDecoder?
        private var decoded = 0
        private var done = false

        private final class Refusal: Sendable {
            let error: TransportError
            init(_ error: TransportError) { self.error = error }
        }

        init(source: BodySource, refusal: TransportError?) {
            self.source = source
            self.refusal = refusal.map(Refusal.init)
            decoder = source.makeDecoder()
        }

        public mutating func next() async throws(TransportError) -> ArraySlice<UInt8>? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(TransportError) -> ArraySlice<UInt8>? {
            while true {
                switch try poll() {
                case .chunk(let chunk): return chunk
                case .end: return nil
                case .pending: await source.waitForBytes()
                }
            }
        }

        /// The next chunk (decoded), the end, or `.pending` while the transfer has delivered nothing new.
        /// Synchronous, so that a reader waiting for bytes keeps only a small async frame.
        @inline(never)
        mutating func poll() throws(TransportError) -> BodySource.Poll {
            if let refusal { throw refusal.error }
            guard !done else { return .end }
            do {
                return try advance()
            } catch {
                done = true
                throw error
            }
        }

        private mutating func advance() throws(TransportError) -> BodySource.Poll {
            while true {
                if let decoder, !decoder.needsInput {
                    let output = try decoder.decode()
                    if !output.isEmpty { return .chunk(try counted(output[...])) }
                    continue
                }
                switch try source.pollRaw() {
                case .chunk(let chunk):
                    guard let decoder else { return .chunk(try counted(chunk)) }
                    decoder.feed(chunk)
                case .end:
                    try decoder?.finish()
                    done = true
                    return .end
                case .pending:
                    return .pending
                }
            }
        }

        /// Counts handed-out bytes against the request's body limit.
        private mutating func counted(_ chunk: ArraySlice<UInt8>) throws(TransportError) -> ArraySlice<UInt8> {
            decoded += chunk.count
            if let limit = source.maxBytes, decoded > limit {
                source.abandon()
                throw TransportError(.bodyTooLarge, message: "the decoded response body exceeds the limit of \(limit) bytes")
            }
            return chunk
        }
    }
}
