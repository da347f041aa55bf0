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
    /// The exchange runs in a task of its own, which hands the body on one chunk at a time as it is
    /// read (the transport's backpressure still applies). Dropping the body, or cancelling a task that
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
                    guard pipe.deliverHead(head) else { return }
                    do throws(TransportError) {
                        var chunks = body.makeAsyncIterator()
                        while let chunk = try await chunks.next() {
                            guard await pipe.send(chunk) else { return }  // the reader left
                        }
                    } catch {
                        throw CurlewError(error)
                    }
                    pipe.finish(.success(body.trailerFields))
                }
            } catch {
                pipe.finish(.failure(error))
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

/// Hands a body from the exchange's task to its reader one chunk at a time: the exchange waits until
/// the reader has taken the previous chunk.
final class BodyPipe: Sendable {
    private struct State {
        var head: Result<ResponseHead, CurlewError>?
        var headWaiter: CheckedContinuation<Result<ResponseHead, CurlewError>, Never>?
        var chunk: ArraySlice<UInt8>?
        /// The exchange waits here until its chunk is taken (true) or the reader left (false).
        var sender: CheckedContinuation<Bool, Never>?
        var receiver: CheckedContinuation<Result<ArraySlice<UInt8>?, CurlewError>, Never>?
        var end: Result<HTTPFields?, CurlewError>?
        var readerGone = false
        var exchange: Task<Void, Never>?
    }

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
            if case .success(let trailers) = state.end, state.chunk == nil { return trailers }
            return nil
        }
    }

    /// Called by the exchange with the head; false when the caller stopped waiting for it.
    func deliverHead(_ head: ResponseHead) -> Bool {
        let waiter = state.withLock { state -> CheckedContinuation<Result<ResponseHead, CurlewError>, Never>?? in
            guard state.head == nil else { return .none }
            state.head = .success(head)
            defer { state.headWaiter = nil }
            return .some(state.headWaiter)
        }
        guard case .some(let continuation) = waiter else { return false }
        continuation?.resume(returning: .success(head))
        return true
    }

    func head() async -> Result<ResponseHead, CurlewError> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<ResponseHead, CurlewError>? in
                if let head = state.head { return head }
                state.headWaiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Called by the exchange with a chunk; returns once the reader took it (true) or left (false).
    func send(_ chunk: ArraySlice<UInt8>) async -> Bool {
        await withCheckedContinuation { continuation in
            let (receiver, gone) = state.withLock { state -> (CheckedContinuation<Result<ArraySlice<UInt8>?, CurlewError>, Never>?, Bool) in
                if state.readerGone { return (nil, true) }
                if let receiver = state.receiver {
                    state.receiver = nil
                    return (receiver, false)
                }
                state.chunk = chunk
                state.sender = continuation
                return (nil, false)
            }
            if gone {
                continuation.resume(returning: false)
            } else if let receiver {
                receiver.resume(returning: .success(chunk))
                continuation.resume(returning: true)
            }
        }
    }

    /// Called by the exchange when it ends: with the trailers, or with its failure.
    func finish(_ end: Result<HTTPFields?, CurlewError>) {
        let (headWaiter, receiver) = state.withLock { state in
            state.end = state.end ?? end
            var headWaiter: CheckedContinuation<Result<ResponseHead, CurlewError>, Never>?
            if state.head == nil, case .failure(let error) = end {
                state.head = .failure(error)
                headWaiter = state.headWaiter
                state.headWaiter = nil
            } else if state.head == nil {
                state.head = .failure(.transport(TransportError(.cancelled, message: "the exchange ended before its response")))
                headWaiter = state.headWaiter
                state.headWaiter = nil
            }
            defer { state.receiver = nil }
            return (headWaiter, state.receiver)
        }
        if let headWaiter, let head = state.withLock({ $0.head }) { headWaiter.resume(returning: head) }
        if let receiver { receiver.resume(returning: end.map { _ in nil }) }
    }

    /// Called by the reader for the next chunk; nil at the end.
    func receive() async throws(CurlewError) -> ArraySlice<UInt8>? {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<ArraySlice<UInt8>?, CurlewError>, Never>) in
                let (ready, sender) = state.withLock { state -> (Result<ArraySlice<UInt8>?, CurlewError>?, CheckedContinuation<Bool, Never>?) in
                    if let chunk = state.chunk {
                        state.chunk = nil
                        defer { state.sender = nil }
                        return (.success(chunk), state.sender)
                    }
                    if let end = state.end { return (end.map { _ in nil }, nil) }
                    if state.readerGone {
                        return (.failure(.transport(TransportError(.cancelled, message: "the task was cancelled"))), nil)
                    }
                    state.receiver = continuation
                    return (nil, nil)
                }
                sender?.resume(returning: true)
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            readerLeft()
        }
        return try result.get()
    }

    /// The reader dropped the body or was cancelled: the exchange ends.
    func readerLeft() {
        let (sender, receiver, exchange) = state.withLock { state in
            state.readerGone = true
            defer {
                state.sender = nil
                state.receiver = nil
                state.chunk = nil
            }
            return (state.sender, state.receiver, state.end == nil ? state.exchange : nil)
        }
        sender?.resume(returning: false)
        receiver?.resume(returning: .failure(.transport(TransportError(.cancelled, message: "the task was cancelled"))))
        exchange?.cancel()
    }
}
