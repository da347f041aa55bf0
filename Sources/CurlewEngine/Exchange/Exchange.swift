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
        /// The task running a stream body's producer, cancelled when the transfer ends: a producer waiting
        /// on its own source (not on a write) learns of the end that way.
        var producerTask: Task<Void, Never>?
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

    // MARK: Performing the machine's actions

    /// Stores the outcome and resumes who waits on it, and tells the hop's record how it ended (`streamed`:
    /// what the loop knew of a streamed response). Later calls do nothing.
    func finish(_ outcome: consuming TransferOutcome, streamed: HopEnd? = nil) {
        // Moved into the machine, not copied (a copy retains each part of a response), unless a record
        // sees it too.
        let seen = record == nil ? nil : copy outcome
        var handed: TransferOutcome? = consume outcome
        let (action, waiter, producer, producerTask) = state.withLock {
            state -> (Machine.FinishAction, Continuation?, Continuation?, Task<Void, Never>?) in
            let action = handed.take().map { state.machine.finish($0) } ?? Machine.FinishAction()
            var waiter: Continuation?
            var producer: Continuation?
            var producerTask: Task<Void, Never>?
            if action.resumeWaiter { swap(&waiter, &state.waiter) }
            if action.resumeProducer { swap(&producer, &state.producer) }
            if action.ended { swap(&producerTask, &state.producerTask) }
            return (action, waiter, producer, producerTask)
        }
        if action.returnedGrowth > 0 { loop.streamBudget.release(action.returnedGrowth) }
        if action.ended, let record, let seen {
            record.ended(
                seen, streamed: streamed,
                hop: HopFacts(
                    started: submitted, requestBodySize: request.request.body?.knownLength,
                    operation: request.request.call?.operation))
        }
        waiter?.resume()
        producer?.resume()
        producerTask?.cancel()
    }
}
