// Curlew — the machine's view of a running transfer's activity: pauses in either direction, idle time,
// and the head of a streamed response ending its total timeout.

extension TransferStateMachine {
    /// The thread's answer to ``LoopAction/checkIdle(_:)``: when the transfer last sent or received a
    /// byte. It is aborted when that is at least the idle timeout ago, else checked again then. A paused
    /// transfer is not idle: its consumer holds the stream, or its producer has nothing to send yet; its
    /// idle time counts from when it resumes.
    mutating func idleCheck(_ id: TransferID, lastActivity: UInt64, now: UInt64, into actions: inout [Action]) {
        guard let slot = live(id), case .running = slots[slot].phase, let idle = slots[slot].idleTimeout else { return }
        let paused = slots[slot].pausedReceive || slots[slot].pausedSend
        let due = (paused ? now : max(lastActivity, slots[slot].resumedAt)) &+ idle
        if now >= due {
            end(id, .idleTimeout, now: now, into: &actions)
        } else {
            slots[slot].idleDeadline = due
            scheduleTimer(slot)
        }
    }

    /// The transfer's response is whole while its request body is not, on a libcurl that would let it
    /// stall (``CurlQuirks/earlyAnswerStallsHTTP2Upload``): its idle limit becomes `limit` from now, so
    /// the thread is asked about it once nothing has moved for that long.
    mutating func shortenIdleTimeout(_ id: TransferID, to limit: UInt64, now: UInt64) {
        guard let slot = live(id), case .running = slots[slot].phase else { return }
        slots[slot].idleTimeout = min(slots[slot].idleTimeout ?? limit, limit)
        slots[slot].idleDeadline = now &+ limit
        scheduleTimer(slot)
    }

    /// A callback paused one direction of a running transfer (curl has paused it).
    mutating func paused(_ id: TransferID, _ direction: PauseDirection) {
        guard let slot = live(id), case .running = slots[slot].phase else { return }
        switch direction {
        case .receive: slots[slot].pausedReceive = true
        case .send: slots[slot].pausedSend = true
        }
    }

    /// The consumer (receive) or producer (send) made room: the direction resumes, with the other
    /// direction's state passed along. The idle clock restarts now.
    mutating func resume(_ id: TransferID, _ direction: PauseDirection, now: UInt64, into actions: inout [Action]) {
        guard let slot = live(id), case .running = slots[slot].phase else { return }
        // curl is told even when the bit was not set: a pause the machine missed must not stall the
        // transfer for good, and resuming a direction that is not paused does nothing.
        switch direction {
        case .receive: slots[slot].pausedReceive = false
        case .send: slots[slot].pausedSend = false
        }
        slots[slot].resumedAt = now
        if let idle = slots[slot].idleTimeout, !slots[slot].pausedReceive, !slots[slot].pausedSend {
            slots[slot].idleDeadline = now &+ idle
            scheduleTimer(slot)
        }
        actions.append(.setPause(id, receive: slots[slot].pausedReceive, send: slots[slot].pausedSend))
    }

    /// Which directions of a transfer are paused.
    func pauseState(of id: TransferID) -> (receive: Bool, send: Bool)? {
        guard let slot = live(id) else { return nil }
        return (slots[slot].pausedReceive, slots[slot].pausedSend)
    }

    /// A streamed response's head arrived: its total timeout is over (the body may take as long as it
    /// takes; the idle timeout still applies).
    mutating func headArrived(_ id: TransferID) {
        guard let slot = live(id), case .running = slots[slot].phase, slots[slot].totalDeadline != nil else { return }
        slots[slot].totalDeadline = nil
        scheduleTimer(slot)
    }
}

extension TransferStateMachine {
    /// The handler of a streamed transfer returned with its whole response while its request body is
    /// still being sent: the total deadline applies again until the transfer ends (a passed deadline
    /// ends it on the next timer pass).
    mutating func rearmTotalDeadline(_ id: TransferID, _ deadline: UInt64) {
        guard let slot = live(id), case .running = slots[slot].phase else { return }
        slots[slot].totalDeadline = deadline
        scheduleTimer(slot)
    }
}
