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
public struct ResponseBody: AsyncSequence, Sendable {
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

    /// Reads the chunks of a ``ResponseBody``.
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

/// Where a ``ResponseBody``'s bytes come from: a transfer in flight, or bytes already in memory.
final class BodySource: Sendable {
    enum Backing: Sendable {
        case live(LiveBody)
        case buffered(Data, chunkSize: Int, trailers: HTTPFields?)
        /// Another library's async sequence, read as it hands out chunks.
        case sequence(ChunkSequenceReader)
    }

    /// A streamed transfer's side of the body.
    struct LiveBody: Sendable {
        let exchange: Exchange
        /// How the body is decoded; nil: handed out as received.
        let coding: ContentDecoder.Coding?
        /// A `Content-Encoding` the body cannot be decoded from, which fails the first read.
        let unsupportedCoding: String?
        let outputChunk: Int
    }

    /// Where the reading of the body is.
    private enum Reading {
        case fresh
        case iterated
        /// The closure the body was handed to returned.
        case scopeEnded
    }

    private struct State {
        var reading = Reading.fresh
        /// Taken out of its scope (``ResponseBody/detach()``): the scope's end leaves it readable.
        var detached = false
        var trailers: HTTPFields?
        /// Buffered backing: the next offset handed out.
        var offset = 0
    }

    let backing: Backing
    /// The request's own body limit (decoded bytes), if it set one.
    let maxBytes: Int?
    let expectedLength: Int?
    private let state = Locked(State())

    init(_ backing: Backing, maxBytes: Int? = nil, expectedLength: Int? = nil) {
        self.backing = backing
        self.maxBytes = maxBytes
        if case .buffered(let data, _, _) = backing {
            self.expectedLength = expectedLength ?? data.count
        } else {
            self.expectedLength = expectedLength
        }
    }

    var trailers: HTTPFields? { state.withLock { $0.trailers } }

    /// Marks the body iterated; returns why it cannot be (again), if so.
    func beginIteration() -> TransportError? {
        state.withLock { state in
            switch state.reading {
            case .scopeEnded:
                return TransportError(
                    .bodyUnavailable, message: "the response body was read after the closure it was handed to returned")
            case .iterated:
                return TransportError(.bodyUnavailable, message: "the response body can be read only once")
            case .fresh:
                state.reading = .iterated
                return nil
            }
        }
    }

    /// The closure the body was handed to returned: later reads fail (the exchange drops the transfer's
    /// bytes when its scope ends). Returns false, and changes nothing, for a detached body: its owner
    /// ends it (``release()``).
    @discardableResult
    func endScope() -> Bool {
        state.withLock { state in
            if state.detached { return false }
            state.reading = .scopeEnded
            return true
        }
    }

    /// Takes the body out of its scope before it is iterated; throws when it was iterated, its scope
    /// ended, or it was taken already.
    func detach() throws(TransportError) {
        let refusal = state.withLock { state -> String? in
            guard !state.detached else { return "the response body was detached already" }
            switch state.reading {
            case .fresh: break
            case .iterated: return "the response body was detached after its reading began"
            case .scopeEnded: return "the response body was detached after the closure it was handed to returned"
            }
            if case .live(let live) = backing, !live.exchange.detach() {
                return "the response body's transfer cannot outlive its closure"
            }
            state.detached = true
            return nil
        }
        if let refusal { throw TransportError(.bodyUnavailable, message: refusal) }
    }

    /// The owner of a detached body let go: later reads fail, and a transfer still running is aborted
    /// (its connection closed).
    func release() {
        state.withLock { $0.reading = .scopeEnded }
        if case .live(let live) = backing { live.exchange.release() }
    }

    func makeDecoder() -> ContentDecoder? {
        guard case .live(let live) = backing, let coding = live.coding else { return nil }
        return ContentDecoder(coding, outputLimit: live.outputChunk)
    }

    /// Aborts a transfer still in flight (the reader gave up: a limit, an error).
    func abandon() {
        if case .live(let live) = backing, !live.exchange.isComplete { live.exchange.abort() }
    }

    /// What a look at the body found.
    enum Poll {
        case chunk(ArraySlice<UInt8>)
        case end
        /// Nothing yet: ``waitForBytes()``, then look again.
        case pending
    }

    /// The next chunk as received, the end (trailers recorded), or `.pending` while a live transfer has
    /// delivered nothing new.
    @inline(never)
    func pollRaw() throws(TransportError) -> Poll {
        if state.withLock({ $0.reading == .scopeEnded }) {
            throw TransportError(
                .bodyUnavailable, message: "the response body was read after the closure it was handed to returned")
        }
        switch backing {
        case .buffered(let data, let chunkSize, let trailers):
            let chunk = state.withLock { state -> ArraySlice<UInt8>? in
                guard state.offset < data.count else {
                    state.trailers = trailers
                    return nil
                }
                let end = min(data.count, state.offset + chunkSize)
                defer { state.offset = end }
                return ArraySlice(data[(data.startIndex + state.offset)..<(data.startIndex + end)])
            }
            return chunk.map { .chunk($0) } ?? .end
        case .sequence(let reader):
            switch reader.take() {
            case nil: return .pending
            case .success(let chunk?)?: return .chunk(chunk)
            case .success(nil)?: return .end
            case .failure(let error)?: throw error
            }
        case .live(let live):
            if let coding = live.unsupportedCoding {
                live.exchange.abort()
                throw TransportError(
                    .badContentEncoding,
                    message: "the response is encoded with \(coding), which a streamed body is not decoded from")
            }
            if Task.isCancelled, !live.exchange.isComplete {
                live.exchange.abort()
                throw live.exchange.cancellation
            }
            switch try live.exchange.poll() {
            case .chunk(let chunk)?:
                return .chunk(chunk)
            case .end(let trailers)?:
                state.withLock { $0.trailers = trailers }
                return .end
            case nil:
                return .pending
            }
        }
    }

    /// Returns once a live transfer has delivered a chunk or ended. Cancelling the waiting task aborts
    /// the transfer (which ends it).
    func waitForBytes() async {
        let live: LiveBody
        switch backing {
        case .live(let body): live = body
        case .sequence(let reader): return await reader.fetch()
        case .buffered: return
        }
        await withTaskCancellationHandler {
            await live.exchange.waitForData()
        } onCancel: {
            live.exchange.abort()
        }
    }
}

/// Reads another library's async sequence for a ``ResponseBody``: the body's reader fetches the next chunk
/// when it waits for bytes, then polls it.
///
/// `@unchecked Sendable`: confined to the body's one reader (a body is iterated once, and its reader
/// awaits each fetch before it polls or fetches again), so the iterator and the fetched chunk need no lock.
final class ChunkSequenceReader: @unchecked Sendable {
    private let pull: () async throws -> ArraySlice<UInt8>?
    private var fetched: Result<ArraySlice<UInt8>?, TransportError>?

    init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == ArraySlice<UInt8> {
        var iterator: Chunks.AsyncIterator?
        pull = {
            var current = iterator ?? chunks.makeAsyncIterator()
            let chunk = try await current.next()
            iterator = current
            return chunk
        }
    }

    /// Waits for the sequence's next chunk, its end or its failure (once fetched, until taken).
    func fetch() async {
        guard fetched == nil else { return }
        do {
            fetched = .success(try await pull())
        } catch let error as TransportError {
            fetched = .failure(error)
        } catch {
            var failure = TransportError(.invalidResponse, message: "the response body's source failed: \(error)")
            failure.underlying = error
            fetched = .failure(failure)
        }
    }

    /// What the last fetch found, handed out once; nil before a fetch.
    func take() -> Result<ArraySlice<UInt8>?, TransportError>? {
        defer { fetched = nil }
        return fetched
    }
}
