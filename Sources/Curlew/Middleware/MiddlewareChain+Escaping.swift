// Curlew — the chain's scoped call turned into a head and a body that outlives the call: for
// interfaces that return the body (an OpenAPI client transport), as an adapter, not a second chain.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes

extension MiddlewareChain {
    /// Sends `request` through the chain and returns as soon as the response head has arrived, with a
    /// body that can be read later and elsewhere.
    ///
    /// The exchange runs in a task of its own, which hands the head and then the body on one chunk at a
    /// time as it is read (the transport's backpressure still applies). Dropping the body, or cancelling a task that
    /// reads it, ends the exchange and closes its connection; so does cancelling the calling task
    /// before the head arrives.
    ///
    /// - Throws: ``CurlewError`` for what fails before the head (transport, middleware).
    public func send(
        _ request: TransportRequest, context: MiddlewareContext = MiddlewareContext()
    ) async throws(CurlewError) -> (ResponseHead, EscapingResponseBody) {
        let pipe = BodyPipe()
        let chain = self
        let exchange = Task {
            do throws(CurlewError) {
                try await chain.perform(request, context: context) { head, body throws(CurlewError) in
                    guard await pipe.deliverHead(head) else { return }
                    do throws(TransportError) {
                        var chunks = body.makeAsyncIterator()
                        while let chunk = try await chunks.next() {
                            guard await pipe.send(chunk) else { return }  // the reader left
                        }
                    } catch {
                        throw CurlewError(error)
                    }
                    await pipe.finish(.success(body.trailerFields))
                }
            } catch {
                await pipe.finish(.failure(error))
            }
        }
        pipe.exchange = exchange
        let head = try await withTaskCancellationHandler {
            await pipe.head()
        } onCancel: {
            exchange.cancel()
        }.get()
        return (head, EscapingResponseBody(pipe))
    }
}

/// A response body that can be read after the call that returned it (see ``MiddlewareChain/send(_:context:)``).
///
/// Read it once. Dropping it before its end ends the exchange.
public final class EscapingResponseBody: AsyncSequence, Sendable {
    public typealias Element = ArraySlice<UInt8>
    public typealias Failure = CurlewError

    let pipe: BodyPipe

    init(_ pipe: BodyPipe) {
        self.pipe = pipe
    }

    deinit {
        pipe.readerLeft()
    }

    /// The trailer fields that followed the last chunk: nil until the body has been read to its end,
    /// and when the response had none.
    public var trailerFields: HTTPFields? { pipe.trailers }

    public func makeAsyncIterator() -> Iterator { Iterator(body: self) }

    /// Reads the chunks of an ``EscapingResponseBody``.
    public struct Iterator: AsyncIteratorProtocol {
        // Holds the body, so the exchange lives as long as an iterator does.
        let body: EscapingResponseBody

        public mutating func next() async throws(CurlewError) -> ArraySlice<UInt8>? {
            try await body.pipe.receive()
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CurlewError) -> ArraySlice<UInt8>? {
            try await body.pipe.receive()
        }
    }
}

/// What the exchange's task hands the reader of an escaping body.
enum PipeItem: BufferedChunk, Sendable {
    case head(ResponseHead)
    case bytes(ArraySlice<UInt8>)
    /// The body ended, with its trailer fields.
    case end(HTTPFields?)
    case failed(CurlewError)

    /// One item at a time: the exchange waits until the reader has taken the previous one.
    package var weight: Int { 1 }
    package static var empty: PipeItem { .end(nil) }
}

/// Hands a body from the exchange's task to its reader one item at a time through the engine's
/// ``HandOff`` (a mark of one item): the head, the chunks, then the end or the failure. The reader's
/// leaving closes it and cancels the exchange's task.
final class BodyPipe: Sendable {
    private struct State {
        /// How the body ended, once the reader has seen it (later reads repeat it).
        var end: Result<HTTPFields?, CurlewError>?
        var readerGone = false
        var exchange: Task<Void, Never>?
    }

    private let items = HandOff<PipeItem>(high: 1)
    private let state = Locked(State())

    var exchange: Task<Void, Never>? {
        get { state.withLock { $0.exchange } }
        set {
            let cancel = state.withLock { state -> Bool in
                state.exchange = newValue
                return state.readerGone
            }
            if cancel { newValue?.cancel() }
        }
    }

    var trailers: HTTPFields? {
        state.withLock { state in
            if case .success(let trailers) = state.end { return trailers }
            return nil
        }
    }

    /// Called by the exchange with the head; false when the caller stopped waiting for it.
    func deliverHead(_ head: ResponseHead) async -> Bool {
        await items.send(.head(head))
    }

    /// Called by the exchange with a chunk; returns once the reader took it (true) or left (false).
    func send(_ chunk: ArraySlice<UInt8>) async -> Bool {
        await items.send(.bytes(chunk))
    }

    /// Called by the exchange when it ends: with the trailers, or with its failure.
    func finish(_ end: Result<HTTPFields?, CurlewError>) async {
        switch end {
        case .success(let trailers): _ = await items.send(.end(trailers))
        case .failure(let error): _ = await items.send(.failed(error))
        }
    }

    /// The head, or what failed before it.
    func head() async -> Result<ResponseHead, CurlewError> {
        switch await items.receive() {
        case .head(let head)?: return .success(head)
        case .failed(let error)?: return .failure(error)
        case .bytes?, .end?, nil:
            return .failure(.transport(TransportError(.cancelled, message: "the exchange ended before its response")))
        }
    }

    /// Called by the reader for the next chunk; nil at the end.
    func receive() async throws(CurlewError) -> ArraySlice<UInt8>? {
        if let end = state.withLock({ $0.end }) { return try end.map { _ in nil }.get() }
        let item = await withTaskCancellationHandler {
            await items.receive()
        } onCancel: {
            readerLeft()
        }
        switch item {
        case .bytes(let chunk)?:
            return chunk
        case .end(let trailers)?:
            state.withLock { $0.end = .success(trailers) }
            return nil
        case .failed(let error)?:
            state.withLock { $0.end = .failure(error) }
            throw error
        case .head?, nil:
            throw .transport(TransportError(.cancelled, message: "the task was cancelled"))
        }
    }

    /// The reader dropped the body or was cancelled: the exchange ends.
    func readerLeft() {
        let exchange = state.withLock { state -> Task<Void, Never>? in
            state.readerGone = true
            return state.end == nil ? state.exchange : nil
        }
        items.close()
        exchange?.cancel()
    }
}
