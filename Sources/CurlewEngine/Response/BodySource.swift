// Curlew — where a response body's bytes come from: a transfer in flight, bytes in memory, or another
// library's sequence; read once, within its scope unless detached.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes

/// Where a ``ResponseBodyStream``'s bytes come from: a transfer in flight, bytes already in memory, or another
/// library's async sequence.
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
        /// Taken out of its scope (``ResponseBodyStream/detach()``): the scope's end leaves it readable.
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
