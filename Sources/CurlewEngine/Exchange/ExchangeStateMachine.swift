// Curlew — one transfer's exchange between the calling task and the loop thread, as a pure state machine:
// where the transfer is, what its response and request sides are doing, and what each event leads to.

/// Every decision about one transfer's hand-over between the task that made it and the loop thread.
///
/// No locks, no continuations, no clocks: ``Exchange`` holds the machine under its one lock, feeds it the
/// events of both sides and performs the actions it returns (resume this waiter, ask the loop to resume or
/// abort, pause curl). Three parts, each with its own states:
/// - the ``Stage`` of the transfer (submitted, queued, running, finished, and cancelling);
/// - the ``ResponseSide``: collected by the loop's sink (a buffered response), or streamed to a reader
///   through one ``ChunkBuffer`` whose high mark grows for a reader that keeps up;
/// - the ``RequestSide``: none, in memory, a file, or a stream body's producer writing through one
///   ``ChunkBuffer`` that curl's read callback drains.
///
/// The reader's and the caller's waits are one waiter, the ``Waiter`` state says whether it waits and
/// whether a wake-up is on its way; the producer's wait is the request side's.
struct ExchangeStateMachine: Sendable {
    /// Where the transfer is.
    enum Stage: CaseIterable, Sendable {
        /// Made, not handed to the loop yet.
        case created
        /// Handed to the loop, which has not registered it yet.
        case submitted
        /// The loop holds it (queued or about to start): a cancellation must go to the loop.
        case queued
        /// curl runs it.
        case running
        /// The calling task cancelled; the loop ends it (or the submission fails at once).
        case cancelling
        /// It ended; the outcome is recorded.
        case finished
    }

    /// Whether the task that reads the response (or awaits the outcome) is suspended.
    enum Waiter: CaseIterable, Sendable {
        /// Running (or not waiting on this exchange).
        case running
        /// Suspended until something new arrives.
        case waiting
        /// Suspended, and its wake-up is scheduled (at the end of the loop's pass, or now).
        case wakeScheduled
        /// Resumed, and it has not looked at the exchange yet (its task may not have run).
        case woken
    }

    /// What the events of the stage lead to.
    enum StageAction: Equatable, Sendable {
        case none
        /// Ask the loop to abort the transfer.
        case tellLoopToCancel
        /// The task was cancelled before the loop saw the transfer: end it with the cancellation.
        case failCancelled
    }

    private(set) var stage: Stage = .created
    private(set) var waiter: Waiter = .running
    var response: ResponseSide
    var request: RequestSide
    /// How the transfer ended, once it has (taken by a buffered caller).
    private(set) var outcome: TransferOutcome?
    /// Whether the streamed body was taken out of the scope it was handed to (``detach()``): the scope's
    /// end then leaves the transfer running, and the body's owner ends it.
    private(set) var detached = false

    init(response: ResponseSide, request: RequestSide) {
        self.response = response
        self.request = request
    }

    /// A machine already in `stage` with `waiter` (for the table tests).
    init(stage: Stage, waiter: Waiter, response: ResponseSide, request: RequestSide) {
        self.stage = stage
        self.waiter = waiter
        self.response = response
        self.request = request
    }

    // MARK: The stage

    /// The caller hands the transfer over. `.failCancelled` when the task was cancelled before: the
    /// caller ends the transfer with the cancellation instead.
    mutating func submit() -> StageAction {
        switch stage {
        case .created:
            stage = .submitted
            return .none
        case .cancelling:
            return .failCancelled
        case .submitted, .queued, .running, .finished:
            return .none
        }
    }

    /// The calling task was cancelled.
    mutating func cancel() -> StageAction {
        switch stage {
        case .created:
            stage = .cancelling
            return .none
        case .submitted, .queued, .running:
            stage = .cancelling
            return .tellLoopToCancel
        case .cancelling, .finished:
            return .none
        }
    }

    /// The loop registered the submission. Returns true when the task was cancelled meanwhile (the
    /// cancellation found no identifier to name): the loop cancels at once.
    mutating func registered() -> Bool {
        switch stage {
        case .submitted:
            stage = .queued
            return false
        case .cancelling:
            return true
        case .created, .queued, .running, .finished:
            return false
        }
    }

    /// curl took the transfer.
    mutating func started() {
        switch stage {
        case .queued: stage = .running
        case .created, .submitted, .running, .cancelling, .finished: break
        }
    }

    /// Whether the task has asked to cancel.
    var isCancelled: Bool {
        switch stage {
        case .cancelling: true
        case .created, .submitted, .queued, .running, .finished: false
        }
    }

    var isFinished: Bool {
        switch stage {
        case .finished: true
        case .created, .submitted, .queued, .running, .cancelling: false
        }
    }

    /// What the transfer's end leads to.
    struct FinishAction: Equatable, Sendable {
        /// Resume the waiter (the caller of a buffered transfer, a reader, a caller awaiting the end).
        var resumeWaiter = false
        /// Resume the producer of a stream body (its writes fail from now on).
        var resumeProducer = false
        /// High-mark bytes to give back to the session's budget.
        var returnedGrowth = 0
        /// Whether this event ended the transfer (false: it had ended).
        var ended = false
    }

    /// The transfer ended: the loop completed or failed it, or it failed before reaching the loop. A
    /// streamed response ends with the failure after the bytes its reader has not taken (a success ends
    /// it only if the loop had not ended it already).
    @discardableResult
    mutating func finish(_ outcome: consuming TransferOutcome) -> FinishAction {
        var action = FinishAction()
        switch stage {
        case .finished:
            return action
        case .created, .submitted, .queued, .running, .cancelling:
            break
        }
        stage = .finished
        action.ended = true
        switch outcome {
        case .success, .streamed: response.end(.complete)
        case .failure(let error): response.end(.failed(error))
        }
        self.outcome = outcome
        action.resumeProducer = request.close()
        action.returnedGrowth = response.takeGrowth()
        action.resumeWaiter = takeWaiter()
        return action
    }

    /// The outcome of a finished transfer, handed out once.
    mutating func takeOutcome() -> TransferOutcome? {
        outcome.take()
    }

    // MARK: The waiter

    /// The waiter suspends (its condition was checked under the same lock).
    mutating func waiterSuspends() {
        waiter = .waiting
    }

    /// Body bytes were delivered to a streamed response: when to wake a waiting reader. At once when half
    /// the cap is held (even if a wake-up at the end of the pass is on its way), so it drains while curl
    /// reads on; otherwise once at the end of the pass.
    mutating func delivered() -> Wake {
        switch waiter {
        case .running, .woken:
            return .none
        case .waiting:
            waiter = .wakeScheduled
            return response.wakesAtOnce ? .now : .endOfPass
        case .wakeScheduled:
            return response.wakesAtOnce ? .now : .none
        }
    }

    /// A wake-up for the waiter, if it waits and none is scheduled: it becomes scheduled.
    mutating func scheduleWake() -> Bool {
        switch waiter {
        case .waiting:
            waiter = .wakeScheduled
            return true
        case .running, .wakeScheduled, .woken:
            return false
        }
    }

    /// The waiter is to be resumed now (if it waits): true when it does.
    mutating func takeWaiter() -> Bool {
        switch waiter {
        case .waiting, .wakeScheduled:
            waiter = .woken
            return true
        case .running, .woken:
            return false
        }
    }

    /// The reader looks at the exchange (it runs).
    mutating func readerLooks() {
        waiter = .running
    }

    /// Whether curl's delivery of `count` bytes to a streamed response may be taken: the mark grows first
    /// for a reader that keeps up, and one waiting for bytes it has not run to take is late, not slow.
    mutating func room(for count: Int) -> Room {
        let late: Bool
        switch waiter {
        case .waiting, .wakeScheduled, .woken: late = true
        case .running: late = false
        }
        return response.room(for: count, readerIsLate: late)
    }

    // MARK: The end of the caller's scope

    /// What the end of the handler's scope leads to.
    enum ScopeEndAction: Equatable, Sendable {
        /// Nothing: the transfer has ended.
        case none
        /// Abort the transfer (its connection is closed) and the request body with it.
        case abort
        /// Wait for the transfer to end (the request body is still being sent); the total timeout applies.
        case awaitEnd
    }

    /// The reader takes a streamed body out of its handler's scope. False for a collected response, and
    /// when it was taken already.
    mutating func detach() -> Bool {
        guard response.isStreamed, !detached else { return false }
        detached = true
        return true
    }

    /// The scoped call the transfer ran in is over (returned or threw): the transfer is aborted unless
    /// its body was detached, whose owner ends it instead.
    mutating func scopeClosed() -> StageAction {
        detached ? .none : cancel()
    }

    /// The handler the response was handed to returned (`returned`) or threw. A handler that returned
    /// after the whole response arrived lets the request body end (its connection is then reused);
    /// otherwise the transfer is aborted, and so is a paused transfer whose reader leaves.
    mutating func scopeEnded(returned: Bool) -> ScopeEndAction {
        let complete = response.release()
        switch stage {
        case .finished:
            return .none
        case .created, .submitted, .queued, .running, .cancelling:
            break
        }
        guard returned, complete, !request.hasFailed else { return .abort }
        return .awaitEnd
    }
}
