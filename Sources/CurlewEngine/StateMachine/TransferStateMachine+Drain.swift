// Curlew — graceful shutdown in the loop's state machine: new work refused, work that never started
// failed, event streams ended, the rest let finish until a deadline, then the loop told it may stop.

extension TransferStateMachine {
    /// Where a graceful shutdown stands.
    enum DrainPhase: Equatable {
        /// No graceful shutdown was asked for.
        case serving
        /// New submissions are refused; running transfers may finish until `deadline` (monotonic
        /// nanoseconds), when the rest are ended.
        case draining(deadline: UInt64)
        /// Every transfer has ended and ``LoopAction/drained`` was returned.
        case drained
    }

    /// A graceful shutdown begins: from now on submissions are refused, transfers waiting for admission
    /// fail (they never started), and running event streams end (they would never finish on their own);
    /// every other running transfer may finish until `deadline`. Asked again while draining, the sooner
    /// deadline holds. Returns ``LoopAction/drained`` once nothing is left (at once when nothing runs).
    mutating func drain(until deadline: UInt64, now: UInt64, into actions: inout [Action]) {
        switch drainPhase {
        case .drained:
            return
        case .draining(let current):
            if deadline < current { drainPhase = .draining(deadline: deadline) }
        case .serving:
            guard !isShutDown else { return }
            drainPhase = .draining(deadline: deadline)
            // The waiting ones first: ending a running transfer would admit them.
            endEvery(.queuedAtShutdown, now: now, into: &actions) { $0.phase == .queued }
            endEvery(.eventStreamAtShutdown, now: now, into: &actions) { $0.endsAtDrain }
        }
        if case .draining(let deadline) = drainPhase, deadline <= now {
            drainDeadlinePassed(now: now, into: &actions)
        } else {
            finishDrainIfDone(into: &actions)
        }
    }

    /// Whether a submission made while draining is refused. Only the next hop of a redirect already in
    /// flight is admitted, since it is part of a request that was admitted before the shutdown began;
    /// an event stream's hop is refused like any event stream.
    func drainRefuses(priority: Priority, endsAtDrain: Bool) -> Bool {
        guard case .draining = drainPhase else { return drainPhase == .drained }
        return priority != .redirectHop || endsAtDrain
    }

    /// The graceful shutdown's deadline passed: whatever is left ends (waiting hops first, so ending a
    /// running transfer admits nothing).
    mutating func drainDeadlinePassed(now: UInt64, into actions: inout [Action]) {
        endEvery(.shutdownDeadline, now: now, into: &actions) { $0.phase == .queued }
        endEvery(.shutdownDeadline, now: now, into: &actions) { $0.phase != .free }
        finishDrainIfDone(into: &actions)
    }

    /// Returns ``LoopAction/drained``, once, when a draining machine has nothing left.
    mutating func finishDrainIfDone(into actions: inout [Action]) {
        guard case .draining = drainPhase, running == 0, queued == 0 else { return }
        drainPhase = .drained
        actions.append(.drained)
    }

    /// Ends every live transfer whose slot matches, in slot order.
    private mutating func endEvery(
        _ reason: EndReason, now: UInt64, into actions: inout [Action], where matches: (Slot) -> Bool
    ) {
        for slot in slots.indices where slots[slot].phase != .free && matches(slots[slot]) {
            end(TransferID(slot: UInt32(slot), generation: slots[slot].generation), reason, now: now, into: &actions)
        }
    }
}
