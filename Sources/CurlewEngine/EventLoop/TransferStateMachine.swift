// Curlew — the loop's bookkeeping as a pure state machine: events in, actions out.

/// One submission known to the state machine: a slot and the generation of its use, so an event about
/// a transfer that has already ended (a late cancellation, a stale timer) is recognised and ignored.
struct TransferID: Hashable, Sendable, CustomStringConvertible {
    let slot: UInt32
    let generation: UInt32

    var description: String { "#\(slot).\(generation)" }
}

/// Why the state machine ends a transfer itself.
enum EndReason: Hashable, Sendable {
    /// The calling task was cancelled.
    case cancelled
    /// The total timeout expired (queued time included).
    case totalTimeout
    /// No byte moved for the idle timeout.
    case idleTimeout
    /// The session shut down.
    case shutdown
}

/// What the loop thread must do after an event.
enum LoopAction<Payload>: CustomStringConvertible {
    /// Hand the transfer to curl on `shard` (open that shard first when it is new); `timeout` is left of
    /// the total timeout, in nanoseconds. `opensConnection`: the transfer was admitted to open a new
    /// connection for a multiplexing key (see ``TransferStateMachine/connectionReady(for:now:into:)``).
    case start(TransferID, Payload, shard: Int, timeout: UInt64?, opensConnection: Bool)
    /// End a transfer curl never saw: resume its caller with the reason.
    case fail(Payload, EndReason)
    /// End a transfer curl is running: take it out of curl, then resume its caller with the reason.
    case abort(TransferID, Payload, EndReason)
    /// The idle timer of a running transfer is due: report its last activity with
    /// ``TransferStateMachine/idleCheck(_:lastActivity:now:into:)``.
    case checkIdle(TransferID)

    var description: String {
        switch self {
        case .start(let id, _, let shard, let timeout, let opens):
            "start \(id) shard \(shard) timeout \(timeout.map(String.init) ?? "none")" + (opens ? " opens" : "")
        case .fail(_, let reason): "fail \(reason)"
        case .abort(let id, _, let reason): "abort \(id) \(reason)"
        case .checkIdle(let id): "checkIdle \(id)"
        }
    }
}

/// Every lifecycle decision of the event loop: admission against the connection limits, the FIFO
/// queue per pool key, cancellation before and after a transfer reaches curl, total and idle timeouts,
/// completion, redirect hops and shutdown.
///
/// It performs no I/O and reads no clock: every event carries `now` (monotonic nanoseconds), and every
/// decision comes back as ``LoopAction``s appended to a buffer the caller reuses. The loop thread owns
/// the only instance and never branches on transfer state itself; the table tests drive it directly.
///
/// - `Key` says which transfers may share connections (scheme, host, port...): limits and queues are
///   per key.
/// - `Payload` is what the thread needs back in an action (the transfer).
struct TransferStateMachine<Key: Hashable, Payload> {
    typealias Action = LoopAction<Payload>

    /// The limits the machine enforces.
    struct Limits: Hashable {
        /// Most transfers running at once per key; 0: no limit.
        var perKey: Int
        /// Most transfers running at once in total; 0: no limit.
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
    private struct Slot {
        var generation: UInt32 = 0
        var phase: Phase = .free
        var key = -1
        var totalDeadline: UInt64?
        var idleDeadline: UInt64?
        /// This transfer's idle timeout (the limits' unless the submission overrode it).
        var idleTimeout: UInt64?
        /// Order among waiting transfers across keys (redirect hops: 0, ahead of all).
        var order: UInt64 = 0
    }

    /// How a key's transfers use connections.
    enum KeyMode: Equatable {
        /// One transfer per connection (HTTP/1.1, known or the only option).
        case single
        /// May multiplex, not known yet: transfers wait for the first connection (PIPEWAIT), at most
        /// ``TransferStateMachine/firstBurst`` of them, which HTTP/2 allows on a connection before the
        /// server's settings arrive.
        case unknown
        /// Multiplexes (HTTP/2) this many streams per connection.
        case multiplexed(streams: Int)
    }

    /// Transfers admitted to a key whose protocol is not known yet: what one HTTP/2 connection carries
    /// before the server's settings arrive (RFC 9113 recommends servers allow at least 100).
    static var firstBurst: Int { 100 }

    private struct KeyState {
        let key: Key
        var queue = WaitQueue()
        var queued = 0
        var running = 0
        var mode: KeyMode
        /// For a multiplexing key: its open connections (as curl opens and closes them), and whether a
        /// transfer admitted to open another is still waiting for it.
        var openConnections = 0
        var openerPending = false
        /// What this key adds to the machine's `connections` (the total limit's count).
        var counted = 0
        /// The shard this key's transfers use when they may not spread; -1 until first needed.
        var homeShard = -1
        /// Whether this key is listed in `ready`.
        var listed = false
    }

    let limits: Limits
    private var slots: [Slot] = []
    private var payloads: [Payload?] = []
    /// The last key looked up and its index: most submissions are to the same host as the one before.
    private var lastKey: (key: Key, index: Int)?
    private var freeSlots: [UInt32] = []
    private var keys: [KeyState] = []
    private var keyIndex: [Key: Int] = [:]
    /// Each transfer's next deadline: the sooner of its total and idle deadlines.
    private var timers = TimerHeap()
    /// Keys whose first waiting transfer could start under the key's own limit (only the total limit
    /// holds it back), ordered by that transfer's submission order: FIFO across keys.
    private var ready = DeadlineHeap<Int>()
    /// Submission counter, for FIFO across keys.
    private var sequence: UInt64 = 0
    private(set) var shardRunning: [Int] = []
    private(set) var running = 0
    /// Connections the running transfers need, over all keys: what the total limit bounds.
    private(set) var connections = 0
    private(set) var queued = 0
    private(set) var isShutDown = false

    init(limits: Limits) {
        self.limits = limits
    }

    // MARK: Events

    /// A new submission. `spreadable` transfers may go to any shard with room (no limits and a key
    /// that cannot multiplex); others stay in their key's home shard. A submission whose task was
    /// already cancelled, or that arrives after shutdown, fails at once.
    ///
    /// - Returns: The transfer's identifier, or nil when it failed at once.
    /// `idleTimeout` overrides the limits' for this transfer (`.some(nil)`: none).
    /// `mayMultiplex`: the key may speak HTTP/2 (its mode starts unknown rather than single).
    @discardableResult
    mutating func submit(
        _ payload: Payload, key: Key, deadline: UInt64?, cancelled: Bool = false, spreadable: Bool = false,
        mayMultiplex: Bool = false, priority: Priority = .normal, idleTimeout: UInt64?? = nil, now: UInt64,
        into actions: inout [Action]
    ) -> TransferID? {
        if isShutDown {
            actions.append(.fail(payload, .shutdown))
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
        let index = keyState(for: key, mayMultiplex: mayMultiplex)
        let id = allocate(payload, key: index, deadline: deadline)
        slots[Int(id.slot)].idleTimeout = idleTimeout ?? limits.idleTimeout
        if deadline != nil { scheduleTimer(Int(id.slot)) }
        sequence &+= 1
        if keys[index].queued == 0, hasRoom(index) {
            start(id, spreadable: spreadable, now: now, into: &actions)
        } else {
            slots[Int(id.slot)].phase = .queued
            if priority == .redirectHop {
                keys[index].queue.prepend(id)
                keys[index].listed = false  // list again under the hop's order; the old entry goes stale
            } else {
                keys[index].queue.append(id)
            }
            slots[Int(id.slot)].order = priority == .redirectHop ? 0 : sequence
            keys[index].queued += 1
            queued += 1
            listIfReady(index)
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
    }

    /// The thread's answer to ``LoopAction/checkIdle(_:)``: when the transfer last sent or received a
    /// byte. It is aborted when that is at least the idle timeout ago, else checked again then.
    mutating func idleCheck(_ id: TransferID, lastActivity: UInt64, now: UInt64, into actions: inout [Action]) {
        guard let slot = live(id), case .running = slots[slot].phase, let idle = slots[slot].idleTimeout else { return }
        let due = lastActivity &+ idle
        if now >= due {
            end(id, .idleTimeout, now: now, into: &actions)
        } else {
            slots[slot].idleDeadline = due
            scheduleTimer(slot)
        }
    }

    /// The key's first response told its protocol: HTTP/2 with `streams` per connection (the client's
    /// cap), or HTTP/1.1 (`multiplexes` false: one transfer per connection from now on).
    /// `openConnections` is how many connections the key has now.
    mutating func learnedProtocol(
        multiplexes: Bool, streams: Int, openConnections: Int, for key: Key, now: UInt64, into actions: inout [Action]
    ) {
        guard let index = keyIndex[key], !isShutDown, keys[index].mode == .unknown else { return }
        keys[index].mode = multiplexes ? .multiplexed(streams: max(1, streams)) : .single
        keys[index].openConnections = max(1, openConnections)
        recount(index)
        listIfReady(index)
        admitWaiting(now: now, into: &actions)
    }

    /// A multiplexing key's connections changed (curl opened or closed one). `unexpected`: a transfer
    /// not admitted to open one made curl open it, because the connections were full at fewer streams
    /// than assumed: the server allows fewer; the key's streams per connection drop to what fitted.
    mutating func connectionsChanged(
        openConnections: Int, unexpected: Bool, for key: Key, now: UInt64, into actions: inout [Action]
    ) {
        guard let index = keyIndex[key], !isShutDown, case .multiplexed(let streams) = keys[index].mode else { return }
        if unexpected, keys[index].openConnections > 0 {
            let fitted = (keys[index].running - 1) / keys[index].openConnections
            keys[index].mode = .multiplexed(streams: max(1, min(streams, fitted)))
        }
        keys[index].openConnections = openConnections
        recount(index)
        listIfReady(index)
        admitWaiting(now: now, into: &actions)
    }

    /// The new connection a transfer was admitted to open is in use (its response arrived) or will not
    /// be (the transfer ended first): more transfers may be admitted.
    mutating func connectionReady(for key: Key, now: UInt64, into actions: inout [Action]) {
        guard let index = keyIndex[key], !isShutDown, keys[index].openerPending else { return }
        keys[index].openerPending = false
        listIfReady(index)
        admitWaiting(now: now, into: &actions)
    }

    /// The mode of a key (for tests and statistics).
    func mode(of key: Key) -> KeyMode? {
        keyIndex[key].map { keys[$0].mode }
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
        for index in keys.indices {
            keys[index].queue = WaitQueue()
            keys[index].queued = 0
            keys[index].running = 0
            keys[index].counted = 0
            keys[index].openerPending = false
        }
        connections = 0
        timers.removeAll()
        ready.removeAll()
        shardRunning = shardRunning.map { _ in 0 }
        running = 0
        queued = 0
    }

    // MARK: Queries

    /// When the machine next needs ``timersFired(now:into:)``, if ever.
    var nextDeadline: UInt64? { timers.first?.deadline }

    /// Sets the slot's timer to the sooner of its deadlines, or removes it when it has none.
    private mutating func scheduleTimer(_ slot: Int) {
        switch (slots[slot].totalDeadline, slots[slot].idleDeadline) {
        case (let total?, let idle?): timers.set(slot, min(total, idle))
        case (let total?, nil): timers.set(slot, total)
        case (nil, let idle?): timers.set(slot, idle)
        case (nil, nil): timers.remove(slot)
        }
    }

    /// Where a transfer is in its lifecycle (`.free` once it has ended).
    func phase(of id: TransferID) -> Phase {
        guard let slot = live(id) else { return .free }
        return slots[slot].phase
    }

    /// Waiting and running transfers per key, for statistics.
    var keyCounts: [(key: Key, queued: Int, running: Int)] {
        keys.compactMap { state in
            state.queued == 0 && state.running == 0 ? nil : (state.key, state.queued, state.running)
        }
    }

    /// Waiting and running transfers for one key.
    func counts(for key: Key) -> (queued: Int, running: Int) {
        guard let index = keyIndex[key] else { return (0, 0) }
        return (keys[index].queued, keys[index].running)
    }

    // MARK: Internals

    private mutating func keyState(for key: Key, mayMultiplex: Bool) -> Int {
        if let last = lastKey, last.key == key { return last.index }
        let index: Int
        if let known = keyIndex[key] {
            index = known
        } else {
            keys.append(KeyState(key: key, mode: mayMultiplex ? .unknown : .single))
            index = keys.count - 1
            keyIndex[key] = index
        }
        lastKey = (key, index)
        return index
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
    private func live(_ id: TransferID) -> Int? {
        let slot = Int(id.slot)
        guard slot < slots.count, slots[slot].generation == id.generation, slots[slot].phase != .free else { return nil }
        return slot
    }

    private func hasRoom(_ key: Int) -> Bool {
        keyHasRoom(key) && totalHasRoom(for: key)
    }

    /// Whether one more transfer of `key` fits the total limit: it does when it joins a connection of
    /// the key that has a free stream, or when another connection may be opened.
    private func totalHasRoom(for key: Int) -> Bool {
        limits.total == 0 || !needsNewConnection(key) || connections < limits.total
    }

    /// Whether one more transfer of `key` needs a connection of its own.
    private func needsNewConnection(_ key: Int) -> Bool {
        switch keys[key].mode {
        case .single, .unknown: true
        case .multiplexed(let streams): keys[key].running >= keys[key].openConnections * streams
        }
    }

    /// The key's contribution to the total limit's count: its connections in use.
    private func connectionsInUse(_ key: Int) -> Int {
        switch keys[key].mode {
        case .single, .unknown: keys[key].running
        case .multiplexed: keys[key].running > 0 ? max(1, keys[key].openConnections) : 0
        }
    }

    private mutating func recount(_ key: Int) {
        let now = connectionsInUse(key)
        connections += now - keys[key].counted
        keys[key].counted = now
    }

    private mutating func start(_ id: TransferID, spreadable: Bool, now: UInt64, into actions: inout [Action]) {
        let slot = Int(id.slot)
        let key = slots[slot].key
        let shard = spreadable ? spreadShard() : homeShard(of: key)
        slots[slot].phase = .running(shard: shard)
        var opensConnection = false
        if case .multiplexed = keys[key].mode, needsNewConnection(key) {
            opensConnection = true
            keys[key].openerPending = true
        }
        keys[key].running += 1
        recount(key)
        running += 1
        shardRunning[shard] += 1
        if let idle = slots[slot].idleTimeout {
            slots[slot].idleDeadline = now &+ idle
            scheduleTimer(slot)
        }
        let timeout = slots[slot].totalDeadline.map { $0 > now ? $0 - now : 1 }
        guard let payload = payloads[slot] else { return }
        actions.append(.start(id, payload, shard: shard, timeout: timeout, opensConnection: opensConnection))
    }

    /// The first shard with room, or a new one.
    private mutating func spreadShard() -> Int {
        if let shard = shardRunning.firstIndex(where: { $0 < limits.shardSize }) { return shard }
        shardRunning.append(0)
        return shardRunning.count - 1
    }

    /// The key's shard, chosen when first needed: the least busy shard with room, or a new one.
    private mutating func homeShard(of key: Int) -> Int {
        if keys[key].homeShard >= 0 { return keys[key].homeShard }
        var best = -1
        for (shard, count) in shardRunning.enumerated() where count < limits.shardSize {
            if best < 0 || count < shardRunning[best] { best = shard }
        }
        if best < 0 {
            shardRunning.append(0)
            best = shardRunning.count - 1
        }
        keys[key].homeShard = best
        return best
    }

    /// Ends a waiting or running transfer for `reason`.
    private mutating func end(_ id: TransferID, _ reason: EndReason, now: UInt64, into actions: inout [Action]) {
        guard let slot = live(id), let payload = payloads[slot] else { return }
        switch slots[slot].phase {
        case .queued:
            let key = slots[slot].key
            keys[key].queued -= 1
            queued -= 1
            free(slot)  // its queue entry is now stale and is skipped when it reaches the front
            actions.append(.fail(payload, reason))
        case .running(let shard):
            release(id, from: shard)
            actions.append(.abort(id, payload, reason))
            admitWaiting(now: now, into: &actions)
        case .free:
            return
        }
    }

    /// Frees a running transfer's place; its key's next waiting transfer becomes ready when the key
    /// now has room.
    private mutating func release(_ id: TransferID, from shard: Int) {
        let slot = Int(id.slot)
        let key = slots[slot].key
        keys[key].running -= 1
        recount(key)
        running -= 1
        shardRunning[shard] -= 1
        free(slot)
        listIfReady(key)
    }

    private mutating func free(_ slot: Int) {
        slots[slot] = Slot(generation: slots[slot].generation &+ 1)
        payloads[slot] = nil
        timers.remove(slot)
        freeSlots.append(UInt32(slot))
    }

    /// Starts waiting transfers, oldest first across keys, while the total limit allows.
    private mutating func admitWaiting(now: UInt64, into actions: inout [Action]) {
        guard queued > 0 else { return }
        while true {
            guard let (key, id) = nextReady() else { return }
            keys[key].queue.removeFirst()
            keys[key].queued -= 1
            queued -= 1
            start(id, spreadable: false, now: now, into: &actions)
            listIfReady(key)
        }
    }

    /// The oldest waiting transfer whose key has room under its own limit, taken off the ready list.
    private mutating func nextReady() -> (Int, TransferID)? {
        while let first = ready.removeFirst() {
            let key = first.element
            keys[key].listed = false
            // The entry is stale when the head it was listed for has left (cancelled, timed out) or the
            // key has since filled up; list the key again for what holds now.
            guard let head = validHead(of: key), slots[Int(head.slot)].order == first.deadline, keyHasRoom(key) else {
                listIfReady(key)
                continue
            }
            guard totalHasRoom(for: key) else {
                // The oldest ready transfer needs a connection the total limit does not allow yet: it
                // keeps its turn (FIFO across keys) until a connection frees.
                keys[key].listed = true
                ready.insert(first.deadline, key)
                return nil
            }
            return (key, head)
        }
        return nil
    }

    /// Whether one more transfer fits the key's own limit: `perKey` connections; over HTTP/2 of `streams`
    /// each, opening one new connection at a time (libcurl 7.88 would otherwise open a connection for
    /// every transfer that finds the others full).
    private func keyHasRoom(_ key: Int) -> Bool {
        let state = keys[key]
        switch state.mode {
        case .single:
            return limits.perKey == 0 || state.running < limits.perKey
        case .unknown:
            return state.running < (limits.perKey == 0 ? Self.firstBurst : min(limits.perKey, Self.firstBurst))
        case .multiplexed(let streams):
            if state.running < state.openConnections * streams { return true }
            return !state.openerPending && (limits.perKey == 0 || state.openConnections < limits.perKey)
        }
    }

    /// The first identifier in the key's queue that still waits, dropping stale ones.
    private mutating func validHead(of key: Int) -> TransferID? {
        while let id = keys[key].queue.first {
            if let slot = live(id), slots[slot].phase == .queued { return id }
            keys[key].queue.removeFirst()
        }
        return nil
    }

    /// Lists the key as ready when its first waiting transfer could start under the key's own limit.
    private mutating func listIfReady(_ key: Int) {
        guard !keys[key].listed, keys[key].queued > 0, keyHasRoom(key), let head = validHead(of: key) else { return }
        keys[key].listed = true
        ready.insert(slots[Int(head.slot)].order, key)
    }
}
