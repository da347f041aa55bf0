// Curlew — the reading side of an exchange: the head, the body's bytes as they arrive, the end, and how
// the handler's scope ends (returned, thrown, detached).

import HTTPTypes

extension Exchange {
    /// The head (nil while it has not arrived); throws the failure that ended the response before it.
    ///
    /// Each of the reader's waits is a synchronous look and a bare wait: an idle stream's task then keeps
    /// only small async frames (an event stream sits in them for hours).
    ///
    /// - Parameter taking: The exchange lets go of the head: a long-lived reader keeps only what it needs.
    @inline(never)
    func pollHead(taking: Bool = false) throws(TransportError) -> ResponseHead? {
        let ready = state.withLock { state -> Result<ResponseHead, TransportError>? in
            // The reader runs: from here on, a full buffer finds it busy or gone, not late.
            state.machine.readerLooks()
            if let head = state.machine.response.pollHead(taking: taking) { return .success(head) }
            switch state.machine.response.end {
            case .failed(let error)?:
                return .failure(error)
            case .complete?:
                return .failure(TransportError(.invalidResponse, message: "the response ended without a head"))
            case nil:
                return nil
            }
        }
        return try ready?.get()
    }

    /// Returns once the head or the end has arrived.
    func waitForHead() async {
        await wait { $0.response.hasHeadNews }
    }

    /// What the reader gets next.
    enum Next: Sendable {
        case chunk(ArraySlice<UInt8>)
        case end(trailers: HTTPFields?)
    }

    /// The next chunk or the end; nil while there is neither (then ``waitForData()``). Asks the loop to
    /// resume a paused transfer once the reader has made room.
    @inline(never)
    func poll() throws(TransportError) -> Next? {
        let (next, trailers) = state.withLock { state in
            state.machine.readerLooks()
            return (state.machine.response.poll(), state.responseTrailers)
        }
        switch next {
        case .chunk(let chunk, let resumeLoop):
            if resumeLoop { loop.enqueue(.resume(self, .receive)) }
            return .chunk(chunk[...])
        case .end(.complete):
            return .end(trailers: trailers)
        case .end(.failed(let error)):
            throw error
        case .pending:
            return nil
        }
    }

    /// Returns once a chunk or the end has arrived.
    func waitForData() async {
        await wait { $0.response.hasNews }
    }

    /// Whether every byte of a streamed response has arrived.
    var isComplete: Bool {
        state.withLock { state in
            if case .complete? = state.machine.response.end { return true }
            return false
        }
    }

    /// The handler the response was handed to returned (`returned`) or threw: what the machine decides.
    /// An abort is sent here; awaiting the end is the caller's (``awaitEnd()``).
    func scopeEnded(returned: Bool) -> Machine.ScopeEndAction {
        let action = state.withLock { $0.machine.scopeEnded(returned: returned) }
        switch action {
        case .abort: abort()
        case .awaitEnd: loop.enqueue(.awaitEnd(self))
        case .none: break
        }
        return action
    }

    /// Takes the streamed body out of its handler's scope (see ``ResponseBodyStream/detach()``): false when the
    /// response is collected or was detached already.
    func detach() -> Bool {
        state.withLock { $0.machine.detach() }
    }

    /// The scoped call is over: aborts the transfer unless its body was detached. Returns whether it was.
    @discardableResult
    func closeScope() -> Bool {
        let (action, detached) = state.withLock { ($0.machine.scopeClosed(), $0.machine.detached) }
        if action == .tellLoopToCancel { loop.enqueue(.cancel(self)) }
        return detached
    }

    /// The reader let go without a handler (an event stream's attempt): a transfer still running is aborted.
    func release() {
        _ = scopeEnded(returned: false)
    }

    /// Waits for the transfer to end after its handler returned (the request body is still being sent),
    /// and returns how it ended. Cancelling the calling task aborts it.
    func awaitEnd() async -> TransferOutcome {
        await withTaskCancellationHandler {
            await wait { $0.isFinished }
        } onCancel: {
            abort()
        }
        return takeOutcome()
    }

    /// Suspends the waiter until `ready` holds (checked under the lock first).
    fileprivate func wait(until ready: (inout Machine) -> Bool) async {
        await withUnsafeContinuation { (continuation: Continuation) in
            let now = state.withLock { state -> Bool in
                if ready(&state.machine) { return true }
                state.waiter = continuation
                state.machine.waiterSuspends()
                return false
            }
            if now { continuation.resume() }
        }
    }
}
