// Curlew — the loop's bookkeeping as a pure state machine: events in, actions out.

/// Every lifecycle decision of the event loop: admission against the connection limits, the FIFO
/// queue per pool key, cancellation before and after a transfer reaches curl, total and idle timeouts,
/// completion, redirect hops, what a host's first response teaches about multiplexing, and shutdown.
///
/// It performs no I/O and reads no clock: every event carries `now` (monotonic nanoseconds), and every
/// decision comes back as ``LoopAction``s appended to a buffer the caller reuses. The loop thread owns
/// the only instance and never branches on transfer state itself; the table tests drive it directly.
/// Admission (limits, queues, connections per key) lives in its ``AdmissionTable``; this type owns the
/// transfers themselves: their slots, timers and shards. A running transfer's pauses and idle time are
/// in `TransferStateMachine+Activity.swift`, what a key's connections teach in `+Keys.swift`.
///
/// - `Key` says which transfers may share connections (scheme, host, port...): limits and queues are
///   per key.
/// - `Payload` is what the thread needs back in an action (the transfer).
struct TransferStateMachine<Key: Hashable, Payload> {
    typealias Action = LoopAction<Payload>
    typealias KeyMode = AdmissionTable<Key>.KeyMode

    /// The limits the machine enforces.
    struct Limits: Hashable {
        /// Most transfers running at once per key (over HTTP/2: connections per key); 0: no limit.
        var perKey: Int
        /// Most connections in use in total; 0: no limit.
        var total: Int
        /// Most transfers per shard before a spreadable transfer opens another.
        var shardSize: Int
        /// Abort a running transfer after this many nanoseconds without activity; nil: never. A
        /// submission may override it.
        var idleTimeout: UInt64?
    }

    /// Where a submission joins its key's queue when it must wait.
    enum Priority {
        /// Behind every waiting transfer.
        case normal
        /// Ahead of them: the next hop of a request that was already admitted once (a redirect).
        case redirectHop
    }

    /// A transfer's place in its lifecycle.
    enum Phase: Equatable {
        case free
        case queued
        case running(shard: Int)
    }

    /// A slot's bookkeeping: plain values only, so reading and resetting it copies bytes without
    /// reference counting (the payloads live in `payloads`, beside it).
    struct Slot {
        var generation: UInt32 = 0
        var phase: Phase = .free
        var key = -1
        var totalDeadline: UInt64?
        var idleDeadline: UInt64?
        /// This transfer's idle timeout (the limits' unless the submission overrode it).
        var idleTimeout: UInt64?
        /// Order among waiting transfers across keys (redirect hops: 0, ahead of all).
        var order: UInt64 = 0
        /// The directions curl was told to pause (by a callback's answer or ``LoopAction/setPause``):
        /// every pause call passes both, since libcurl sets both at once.
        var pausedReceive = false
        var pausedSend = false
        /// When a paused direction last resumed: idle time counts from then at the earliest.
        var resumedAt: UInt64 = 0
        /// An event stream: a graceful shutdown ends it at once instead of letting it finish.
        var endsAtDrain = false
    }

    let limits: Limits
    var admission: AdmissionTable<Key>
    var slots: [Slot] = []
    private var payloads: [Payload?] = []
    private var freeSlots: [UInt32] = []
    /// Each transfer's next deadline: the sooner of its total and idle deadlines.
    private var timers = TimerHeap()
    /// Submission counter, for FIFO across keys.
    private var sequence: UInt64 = 0
    private(set) var shardRunning: [Int] = []
    /// The shard of isolated keys (see ``submit(_:key:deadline:cancelled:spreadable:mayMultiplex:isolated:priority:idleTimeout:now:into:)``), which no other key uses; -1 until needed.
    private(set) var isolatedShard = -1
    private(set) var running = 0
    private(set) var isShutDown = false
    /// Where a graceful shutdown stands (`TransferStateMachine+Drain.swift`).
    var drainPhase = DrainPhase.serving

    init(limits: Limits) {
        self.limits = limits
        admission = AdmissionTable(perKey: limits.perKey, total: limits.total)
    }

    /// Transfers waiting for admission.
    var queued: Int { admission.queued }
    /// Connections in use, as the total limit counts them.
    var connections: Int { admission.connections }

    // MARK: Events

    /// A new submission. `spreadable` transfers may go to any shard with room (no limits and a key
    /// that cannot multiplex); others stay in their key's home shard. `mayMultiplex`: the key may
    /// speak HTTP/2. `isolated`: the key's connections must never be in one connection cache with other
    /// keys' (requests held to HTTP/1.1 on a host the others reach over HTTP/2), so its home shard is one
    /// only such keys use. `idleTimeout` overrides the limits' for this transfer (`.some(nil)`: none).
    /// `endsAtDrain`: an event stream, which a graceful shutdown ends at once. A submission whose task was
    /// already cancelled, past its deadline, after shutdown, or refused by a graceful shutdown, fails at once.
    ///
    /// - Returns: The transfer's identifier, or nil when it failed at once.
    @discardableResult
    mutating func submit(
        _ payload: Payload, key: Key, deadline: UInt64?, cancelled: Bool = false, spreadable: Bool = false,
        mayMultiplex: Bool = false, isolated: Bool = false, priority: Priority = .normal, idleTimeout: UInt64?? = nil,
        endsAtDrain: Bool = false, now: UInt64, into actions: inout [Action]
    ) -> TransferID? {
        if isShutDown {
            actions.append(.fail(payload, .shutdown))
            return nil
        }
        if drainPhase != .serving, drainRefuses(priority: priority, endsAtDrain: endsAtDrain) {
            actions.append(.fail(payload, .refused))
            return nil
        }
        if cancelled {
            actions.append(.fail(payload, .cancelled))
            return nil
        }
        if let deadline, deadline <= now {
            actions.append(.fail(payload, .totalTimeout))
            return nil
        }
        let index = admission.index(for: key, mayMultiplex: mayMultiplex, isolated: isolated)
        let id = allocate(payload, key: index, deadline: deadline)
        let slot = Int(id.slot)
        slots[slot].idleTimeout = idleTimeout ?? limits.idleTimeout
        slots[slot].endsAtDrain = endsAtDrain
        if deadline != nil { scheduleTimer(slot) }
        sequence &+= 1
        if admission.mayStartNow(index) {
            start(id, spreadable: spreadable, now: now, into: &actions)
        } else {
            slots[slot].phase = .queued
            slots[slot].order = priority == .redirectHop ? 0 : sequence
            admission.enqueue(id, at: index, first: priority == .redirectHop, stillWaiting: { [slots] in Self.waitingOrder($0, in: slots) })
        }
        return id
    }

    /// The calling task was cancelled. A waiting transfer leaves its queue at once; a running one is
    /// aborted. A transfer that already ended is left alone.
    mutating func cancel(_ id: TransferID, now: UInt64, into actions: inout [Action]) {
        end(id, .cancelled, now: now, into: &actions)
    }

    /// curl finished the transfer (with a response or an error). Its place goes to the next waiting
    /// transfer.
    ///
    /// - Returns: The payload, or nil when the transfer had already been ended by the machine.
    mutating func complete(_ id: TransferID, now: UInt64, into actions: inout [Action]) -> Payload? {
        guard let slot = live(id), case .running(let shard) = slots[slot].phase else { return nil }
        let payload = payloads[slot]
        release(id, from: shard)
        admitWaiting(now: now, into: &actions)
        finishDrainIfDone(into: &actions)
        return payload
    }

    /// curl refused to take a transfer the machine started: like a completion, without a response.
    mutating func startFailed(_ id: TransferID, now: UInt64, into actions: inout [Action]) -> Payload? {
        complete(id, now: now, into: &actions)
    }

    /// Timers due at `now`: waiting or running transfers past their total timeout end; running transfers
    /// whose idle timer is due are to be checked.
    mutating func timersFired(now: UInt64, into actions: inout [Action]) {
        while let (slot, deadline) = timers.first, deadline <= now {
            let id = TransferID(slot: UInt32(slot), generation: slots[slot].generation)
            if let total = slots[slot].totalDeadline, total <= now {
                end(id, .totalTimeout, now: now, into: &actions)  // frees the slot and its timer
            } else {
                // The idle deadline is due: ask for the transfer's activity; `idleCheck` sets the next one.
                slots[slot].idleDeadline = nil
                scheduleTimer(slot)
                actions.append(.checkIdle(id))
            }
        }
        if case .draining(let deadline) = drainPhase, deadline <= now { drainDeadlinePassed(now: now, into: &actions) }
    }

    /// The session is shutting down: every waiting transfer fails and every running one is aborted;
    /// later submissions fail at once.
    mutating func shutdown(into actions: inout [Action]) {
        guard !isShutDown else { return }
        isShutDown = true
        for slot in slots.indices {
            guard let payload = payloads[slot] else { continue }
            let id = TransferID(slot: UInt32(slot), generation: slots[slot].generation)
            switch slots[slot].phase {
            case .queued: actions.append(.fail(payload, .shutdown))
            case .running: actions.append(.abort(id, payload, .shutdown))
            case .free: continue
            }
            slots[slot] = Slot(generation: slots[slot].generation &+ 1)
            payloads[slot] = nil
        }
        admission.removeAll()
        timers.removeAll()
        shardRunning = shardRunning.map { _ in 0 }
        running = 0
    }

    // MARK: Queries

    /// When the machine next needs ``timersFired(now:into:)``, if ever.
    var nextDeadline: UInt64? {
        guard case .draining(let drain) = drainPhase else { return timers.first?.deadline }
        return min(timers.first?.deadline ?? drain, drain)
    }

    /// Where a transfer is in its lifecycle (`.free` once it has ended).
    func phase(of id: TransferID) -> Phase {
        guard let slot = live(id) else { return .free }
        return slots[slot].phase
    }

    // MARK: Internals

    /// A waiting transfer's FIFO order, or nil when it no longer waits (the admission table's view).
    /// Static over the slots: a method reference would capture a copy of the whole machine, sharing the
    /// storage of the `admission` table the caller is changing, so every change to it would copy it.
    private static func waitingOrder(_ id: TransferID, in slots: [Slot]) -> UInt64? {
        let slot = Int(id.slot)
        guard slot < slots.count, slots[slot].generation == id.generation, slots[slot].phase == .queued else { return nil }
        return slots[slot].order
    }

    private mutating func allocate(_ payload: Payload, key: Int, deadline: UInt64?) -> TransferID {
        let slot: Int
        if let reused = freeSlots.popLast() {
            slot = Int(reused)
        } else {
            slots.append(Slot())
            payloads.append(nil)
            slot = slots.count - 1
        }
        payloads[slot] = payload
        slots[slot].key = key
        slots[slot].totalDeadline = deadline
        slots[slot].idleDeadline = nil
        return TransferID(slot: UInt32(slot), generation: slots[slot].generation)
    }

    /// The slot index when `id` names a transfer that has not ended.
    func live(_ id: TransferID) -> Int? {
        let slot = Int(id.slot)
        guard slot < slots.count, slots[slot].generation == id.generation, slots[slot].phase != .free else { return nil }
        return slot
    }

    /// Sets the slot's timer to the sooner of its deadlines, or removes it when it has none.
    mutating func scheduleTimer(_ slot: Int) {
        switch (slots[slot].totalDeadline, slots[slot].idleDeadline) {
        case (let total?, let idle?): timers.set(slot, min(total, idle))
        case (let total?, nil): timers.set(slot, total)
        case (nil, let idle?): timers.set(slot, idle)
        case (nil, nil): timers.remove(slot)
        }
    }

    private mutating func start(_ id: TransferID, spreadable: Bool, now: UInt64, into actions: inout [Action]) {
        let slot = Int(id.slot)
        let key = slots[slot].key
        let shard = spreadable ? spreadShard() : homeShard(of: key)
        slots[slot].phase = .running(shard: shard)
        let connection = admission.started(key, id: id)
        running += 1
        shardRunning[shard] += 1
        if let idle = slots[slot].idleTimeout {
            slots[slot].idleDeadline = now &+ idle
            scheduleTimer(slot)
        }
        let timeout = slots[slot].totalDeadline.map { $0 > now ? $0 - now : 1 }
        guard let payload = payloads[slot] else { return }
        actions.append(.start(id, payload, shard: shard, timeout: timeout, connection: connection))
    }

    /// The first shard with room, or a new one (never the isolated keys' shard).
    private mutating func spreadShard() -> Int {
        if let shard = shardRunning.indices.first(where: { shardRunning[$0] < limits.shardSize && $0 != isolatedShard }) {
            return shard
        }
        shardRunning.append(0)
        return shardRunning.count - 1
    }

    /// The key's shard, chosen when first needed: for an isolated key the isolated keys' own shard;
    /// otherwise the least busy shard with room (not that one), or a new one.
    private mutating func homeShard(of key: Int) -> Int {
        let home = admission.homeShard(of: key)
        if home >= 0 { return home }
        if admission.isIsolated(key) {
            if isolatedShard < 0 {
                shardRunning.append(0)
                isolatedShard = shardRunning.count - 1
            }
            admission.setHomeShard(isolatedShard, of: key)
            return isolatedShard
        }
        var best = -1
        for (shard, count) in shardRunning.enumerated() where count < limits.shardSize && shard != isolatedShard {
            if best < 0 || count < shardRunning[best] { best = shard }
        }
        if best < 0 {
            shardRunning.append(0)
            best = shardRunning.count - 1
        }
        admission.setHomeShard(best, of: key)
        return best
    }

    /// Ends a waiting or running transfer for `reason`.
    mutating func end(_ id: TransferID, _ reason: EndReason, now: UInt64, into actions: inout [Action]) {
        guard let slot = live(id), let payload = payloads[slot] else { return }
        switch slots[slot].phase {
        case .queued:
            admission.abandoned(at: slots[slot].key)
            free(slot)  // its queue entry is now stale and is skipped when it reaches the front
            actions.append(.fail(payload, reason))
        case .running(let shard):
            release(id, from: shard)
            actions.append(.abort(id, payload, reason))
            admitWaiting(now: now, into: &actions)
        case .free:
            return
        }
        finishDrainIfDone(into: &actions)
    }

    /// Frees a running transfer's place; its key's next waiting transfer becomes ready when the key
    /// now has room.
    private mutating func release(_ id: TransferID, from shard: Int) {
        let slot = Int(id.slot)
        let key = slots[slot].key
        running -= 1
        shardRunning[shard] -= 1
        free(slot)
        admission.released(key, stillWaiting: { [slots] in Self.waitingOrder($0, in: slots) })
    }

    private mutating func free(_ slot: Int) {
        slots[slot] = Slot(generation: slots[slot].generation &+ 1)
        payloads[slot] = nil
        timers.remove(slot)
        freeSlots.append(UInt32(slot))
    }

    /// A key's admission changed: list it if its waiting transfer fits now, and start what may start.
    mutating func admitAfterChange(of index: Int, now: UInt64, into actions: inout [Action]) {
        admission.listIfReady(index, stillWaiting: { [slots] in Self.waitingOrder($0, in: slots) })
        admitWaiting(now: now, into: &actions)
    }

    /// Starts waiting transfers, oldest first across keys, while the limits allow.
    private mutating func admitWaiting(now: UInt64, into actions: inout [Action]) {
        while let (key, id) = admission.takeNext(stillWaiting: { [slots] in Self.waitingOrder($0, in: slots) }) {
            start(id, spreadable: false, now: now, into: &actions)
            admission.listIfReady(key, stillWaiting: { [slots] in Self.waitingOrder($0, in: slots) })
        }
    }
}
