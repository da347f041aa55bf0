// Curlew — one transfer's exchange between the calling task and the loop thread: the state machine under
// one lock, the two waiters, and the calling side's operations.

import HTTPTypes

/// One transfer, shared by the task that made it (its caller, the reader of a streamed response, a stream
/// body's producer) and the loop thread that runs it.
///
/// Every decision is the ``ExchangeStateMachine``'s; this object holds it under one lock with the two
/// waiters it wakes (the caller or reader, and the producer), performs its actions and tells the loop
/// what to do. The outcome built on the loop thread reaches the task through that lock, which the thread
/// sanitizer sees, unlike the concurrency runtime's own ordering.
final class Exchange: Sendable {
    typealias Machine = ExchangeStateMachine
    typealias Continuation = UnsafeContinuation<Void, Never>

    struct State {
        var machine: Machine
        /// The caller awaiting the outcome, or the reader awaiting the head, bytes or the end.
        var waiter: Continuation?
        /// A stream body's producer awaiting room or a new run.
        var producer: Continuation?
        /// The loop's identifier, once the loop has taken the submission.
        var id: TransferID?
        /// A streamed response's trailer fields, once its body ended.
        var responseTrailers: HTTPFields?
        /// A stream body's trailer fields, once its producer returned.
        var requestTrailers: HTTPFields?
    }

    let request: PreparedRequest
    /// The absolute total-timeout deadline (monotonic nanoseconds), shared by every redirect hop.
    let deadline: UInt64?
    /// Whether this is a redirect hop of a request that was already admitted once.
    let isRedirectHop: Bool
    /// When the caller handed the transfer over (monotonic nanoseconds).
    let submitted: UInt64
    let loop: EventLoop
    /// Whether the response is read as it arrives (otherwise the loop collects it).
    let streamsResponse: Bool
    /// Trailer fields known before sending (bodies in memory and files); a stream's come with its end.
    let knownTrailers: HTTPFields?
    /// Whether the request sends trailers at all.
    let sendsTrailers: Bool
    /// The machine and the waiters (the loop side's operations are in `Exchange+Loop.swift`).
    let state: Locked<State>
    /// What sees how this hop ends (telemetry, the request's log lines); nil when nothing does.
    let record: (any HopRecord)?

    /// An exchange whose response is collected in memory and whose body, if any, curl sends without it:
    /// the common case, whose machine is built in place.
    init(
        request: PreparedRequest, deadline: UInt64?, isRedirectHop: Bool = false, submitted: UInt64 = MonotonicClock.now(),
        loop: EventLoop, record: (any HopRecord)? = nil
    ) {
        self.record = record
        self.request = request
        self.deadline = deadline
        self.isRedirectHop = isRedirectHop
        self.submitted = submitted
        self.loop = loop
        streamsResponse = false
        knownTrailers = nil
        sendsTrailers = false
        state = Locked { State(machine: Machine(response: .collected, request: .fixed(.none))) }
    }

    /// An exchange with the given sides: a streamed response, a stream body, trailers.
    init(
        request: PreparedRequest, deadline: UInt64?, isRedirectHop: Bool = false, submitted: UInt64 = MonotonicClock.now(),
        loop: EventLoop, response: Machine.ResponseSide, body: Machine.RequestSide, knownTrailers: HTTPFields? = nil,
        sendsTrailers: Bool = false, record: (any HopRecord)? = nil
    ) {
        self.record = record
        self.request = request
        self.deadline = deadline
        self.isRedirectHop = isRedirectHop
        self.submitted = submitted
        self.loop = loop
        streamsResponse = response.isStreamed
        self.knownTrailers = knownTrailers
        self.sendsTrailers = sendsTrailers
        state = Locked(State(machine: Machine(response: response, request: body)))
    }

    /// The error a cancelled exchange ends with.
    var cancellation: TransportError { request.error(.cancelled, "the task was cancelled") }

    // MARK: Submission and cancellation

    /// Submits a transfer whose response is collected in memory and waits for its outcome; cancelling
    /// the calling task aborts it.
    // Inlined: every buffered request passes here, and a separate async frame costs a task allocation.
    @inline(__always)
    func submitAndWait() async -> TransferOutcome {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: Continuation) in
                guard attach(continuation) else { return }
                if !loop.enqueue(.submit(self)) {
                    finish(.failure(request.error(.sessionShutDown, "the session was shut down")))
                }
            }
        } onCancel: {
            // Must not block: flag the exchange and, if the loop has it, queue an abort.
            abort()
        }
        return takeOutcome()
    }

    /// Stores the caller's continuation and hands the transfer over. False, having resumed it with the
    /// cancellation, when the task was cancelled before.
    private func attach(_ continuation: Continuation) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            switch state.machine.submit() {
            case .failCancelled:
                return true
            case .none, .tellLoopToCancel:
                state.waiter = continuation
                state.machine.waiterSuspends()
                return false
            }
        }
        if cancelled {
            finish(.failure(cancellation))
            continuation.resume()
        }
        return !cancelled
    }

    /// Hands a streamed transfer to the loop, whose reader waits on the head instead (it fails at once
    /// when the task was cancelled or the session was shut down).
    func submitStreamed() {
        let cancelled = state.withLock { state -> Bool in
            switch state.machine.submit() {
            case .failCancelled: return true
            case .none, .tellLoopToCancel: return false
            }
        }
        if cancelled {
            finish(.failure(cancellation))
            return
        }
        if !loop.enqueue(.submit(self)) { finish(.failure(request.error(.sessionShutDown, "the session was shut down"))) }
    }

    /// Submits a streamed transfer and waits for its head; cancelling the calling task aborts it.
    @inline(never)
    func submitAndWaitForHead() async throws(TransportError) -> ResponseHead {
        submitStreamed()
        while true {
            // Taken: the reader keeps the head it needs, and a stream holds no second copy for its life.
            if let head = try pollHead(taking: true) { return head }
            await withTaskCancellationHandler {
                await waitForHead()
            } onCancel: {
                abort()
            }
        }
    }

    /// Aborts the transfer (its connection is closed) unless it has ended: the task was cancelled, or
    /// the reader gave up.
    func abort() {
        let action = state.withLock { $0.machine.cancel() }
        switch action {
        case .tellLoopToCancel: loop.enqueue(.cancel(self))
        case .none, .failCancelled: break
        }
    }

    /// Whether the calling task has asked to cancel.
    var isCancelled: Bool { state.withLock { $0.machine.isCancelled } }

    /// The outcome, once the caller has been resumed.
    func takeOutcome() -> TransferOutcome {
        state.withLock { state in
            // Resumed only after an outcome was stored; the fallback keeps a broken invariant typed.
            state.machine.takeOutcome() ?? .failure(request.error(.cancelled, "the transfer ended without an outcome"))
        }
    }

    // MARK: The reader

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

    /// Takes the streamed body out of its handler's scope (see ``ResponseBody/detach()``): false when the
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
    private func wait(until ready: (inout Machine) -> Bool) async {
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

    // MARK: The producer of a stream body

    /// The producer's current run.
    var generation: Int { state.withLock { $0.machine.request.generation } }

    /// Appends a chunk written by the producer of `generation`; asks the loop to resume sending when curl
    /// waits for bytes. Returns whether the producer must wait for room, or throws why the write fails.
    func write(_ chunk: ArraySlice<UInt8>, generation: Int) throws(TransportError) -> Bool {
        let outcome = state.withLock { $0.machine.request.write(chunk, generation: generation) }
        if outcome.resumeLoop { loop.enqueue(.resume(self, .send)) }
        if let error = outcome.error { throw error }
        return outcome.mustWait
    }

    /// Waits until the held bytes drop to the low mark, the exchange ends or the run is replaced.
    func waitForRoom(generation: Int) async {
        await withUnsafeContinuation { (continuation: Continuation) in
            let wait = state.withLock { state -> Bool in
                guard state.machine.request.producerWaitsForRoom(generation: generation) else { return false }
                state.producer = continuation
                return true
            }
            if !wait { continuation.resume() }
        }
    }

    /// Wakes a producer waiting for room (its task was cancelled).
    func releaseProducer() {
        let producer = state.withLock { state -> Continuation? in
            defer { state.producer = nil }
            return state.producer
        }
        producer?.resume()
    }

    /// The producer of `generation` returned, with its trailer fields.
    func finishBody(generation: Int, trailers: HTTPFields?) {
        let resume = state.withLock { state -> Bool in
            let resume = state.machine.request.finish(generation: generation)
            if state.machine.request.generation == generation { state.requestTrailers = trailers }
            return resume
        }
        if resume { loop.enqueue(.resume(self, .send)) }
    }

    /// The producer of `generation` threw `error`: the transfer fails with it (unless the exchange is over
    /// or the run was replaced).
    func failBody(generation: Int, _ error: TransportError) {
        let resume = state.withLock { $0.machine.request.fail(generation: generation, error) }
        if resume { loop.enqueue(.resume(self, .send)) }
    }

    /// After a run ended: waits until curl asks for the body again (returns the new run) or the exchange
    /// ends (returns nil).
    func waitForReplay(after generation: Int) async -> Int? {
        while true {
            await withUnsafeContinuation { (continuation: Continuation) in
                let wait = state.withLock { state -> Bool in
                    guard state.machine.request.producerWaitsForReplay(after: generation) else { return false }
                    state.producer = continuation
                    return true
                }
                if !wait { continuation.resume() }
            }
            // The one producer slot may be resumed for room left over from the run that ended: wait on.
            let (closed, current) = state.withLock { ($0.machine.request.isClosed, $0.machine.request.generation) }
            if closed { return nil }
            if current != generation { return current }
        }
    }

    /// Whether the request side is over (writes fail).
    var isRequestClosed: Bool { state.withLock { $0.machine.request.isClosed } }

    // MARK: Performing the machine's actions

    /// Stores the outcome and resumes who waits on it, and tells the hop's record how it ended (`streamed`:
    /// what the loop knew of a streamed response). Later calls do nothing.
    func finish(_ outcome: TransferOutcome, streamed: HopEnd? = nil) {
        let (action, waiter, producer) = state.withLock { state -> (Machine.FinishAction, Continuation?, Continuation?) in
            let action = state.machine.finish(outcome)
            var waiter: Continuation?
            var producer: Continuation?
            if action.resumeWaiter { swap(&waiter, &state.waiter) }
            if action.resumeProducer { swap(&producer, &state.producer) }
            return (action, waiter, producer)
        }
        if action.returnedGrowth > 0 { loop.streamBudget.release(action.returnedGrowth) }
        if action.ended, let record {
            record.ended(
                outcome, streamed: streamed,
                hop: HopFacts(started: submitted, requestBodySize: request.request.body?.knownLength))
        }
        waiter?.resume()
        producer?.resume()
    }
}
