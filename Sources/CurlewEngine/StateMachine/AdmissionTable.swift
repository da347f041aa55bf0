// Curlew — who may start now: per-key limits, FIFO queues and connection accounting.

/// What a transfer that starts does about connections.
enum ConnectionRole: Equatable {
    /// Joins a connection with a free stream, or is one transfer of its own connection (HTTP/1.1).
    case joins
    /// Opens the key's next connection (the one opener the key may have pending).
    case opens
    /// Finds out whether the key's connections, full as far as the engine knows, take one stream
    /// more: the server's stream limit is not known yet. curl either puts it on a connection (the
    /// limit is higher: `AdmissionTable.probeJoined(at:)`) or opens a connection for it (the limit
    /// is what the connections carry: `AdmissionTable.probeOpened`).
    case probes
}

/// The admission half of ``TransferStateMachine``: for each pool key its waiting transfers (FIFO), how
/// many run and how they use connections, and which key's transfer starts next when room frees.
///
/// It knows transfers only by identifier; whether an identifier still waits (it may have been
/// cancelled or timed out) is the machine's to say, through the `stillWaiting` closures.
struct AdmissionTable<Key: Hashable> {
    /// How a key's transfers use connections.
    enum KeyMode: Equatable {
        /// One transfer per connection (HTTP/1.1, known or the only option).
        case single
        /// May multiplex, not known yet: transfers wait for the first connection (PIPEWAIT), at most
        /// ``AdmissionTable/firstBurst`` of them, which HTTP/2 allows on a connection before the
        /// server's settings arrive.
        case unknown
        /// Multiplexes (HTTP/2) this many streams per connection: the server's limit once known, else
        /// as many as have been seen to fit (see ``ConnectionRole/probes``).
        case multiplexed(streams: Int)
    }


    /// Transfers admitted to a key whose protocol is not known yet: what one HTTP/2 connection carries
    /// before the server's settings arrive (RFC 9113 recommends servers allow at least 100).
    static var firstBurst: Int { 100 }

    /// The streams libcurl lets a new HTTP/2 connection carry until the server's settings arrive.
    static var streamsBeforeSettings: Int { 100 }

    /// One key's queue, counts and what is known of its connections. Not private: the multiplexing
    /// rules (`AdmissionTable+Multiplexing.swift`) update it.
    struct KeyState {
        let key: Key
        var queue = WaitQueue()
        var queued = 0
        var running = 0
        var mode: KeyMode
        /// For a multiplexing key: its open connections (as curl opens and closes them), and whether a
        /// transfer admitted to open another is still waiting for it.
        var openConnections = 0
        var openerPending = false
        /// `openConnections` when the pending opener started: its connection adds no room until it is
        /// ready, since libcurl makes every transfer that finds the others full and this one still
        /// connecting open a connection of its own.
        var connectionsBeforeOpener = 0
        /// The pending opener's connection is up (its first transfer is about to send): before the
        /// server's settings arrive, libcurl lets it carry ``AdmissionTable/streamsBeforeSettings``.
        var openerUp = false
        /// The pending opener (or probe): events about an earlier one are ignored.
        var opener: TransferID?

        /// The connections new streams may join: those open, less one the pending opener is setting up.
        var usableConnections: Int {
            openerPending ? min(openConnections, connectionsBeforeOpener) : openConnections
        }

        /// The streams the key's connections may carry now: `streams` on each usable connection, and what
        /// libcurl allows on the pending opener's connection once it is up.
        func capacity(streams: Int) -> Int {
            usableConnections * streams
                + (openerPending && openerUp ? min(streams, AdmissionTable.streamsBeforeSettings) : 0)
        }
        /// Whether a multiplexing key's `streams` is the server's limit (or the client's cap), rather
        /// than as many as have been seen to fit.
        var limitKnown = false
        /// The client's cap on streams per connection (`CURLMOPT_MAX_CONCURRENT_STREAMS`).
        var streamCap = 1
        /// A probe has started and curl has not yet placed it; `probeTainted`: a stream of the key ended
        /// meanwhile, so a probe that joins may have taken that stream rather than one more.
        var probePending = false
        var probeTainted = false
        /// What this key adds to `connections` (the total limit's count).
        var counted = 0
        /// The shard this key's transfers use when they may not spread; -1 until first needed.
        var homeShard = -1
        /// Whether the key's connections must live apart from every other key's (see
        /// ``TransferStateMachine/submit(_:key:deadline:cancelled:spreadable:mayMultiplex:isolated:priority:idleTimeout:now:into:)``).
        var isolated = false
        /// Whether this key is listed in `ready`.
        var listed = false
    }

    /// Most transfers running per key (HTTP/1.1) or connections per key (HTTP/2); 0: no limit.
    let perKey: Int
    /// Most connections in use in total; 0: no limit.
    let total: Int
    /// Every key's state, by index; only this type and its extensions touch it.
    var keys: [KeyState] = []
    private var keyIndex: [Key: Int] = [:]
    /// The last key looked up and its index: most submissions are to the same host as the one before.
    private var lastKey: (key: Key, index: Int)?
    /// Keys whose first waiting transfer could start under the key's own limit, ordered by that
    /// transfer's order: FIFO across keys when only the total limit holds them back.
    private var ready = DeadlineHeap<Int>()
    /// Connections in use over all keys: what the total limit bounds.
    private(set) var connections = 0
    /// Transfers waiting over all keys.
    private(set) var queued = 0

    init(perKey: Int, total: Int) {
        self.perKey = perKey
        self.total = total
    }

    // MARK: Keys

    /// The key's index, creating its state on first sight (`mayMultiplex`: its mode starts unknown).
    mutating func index(for key: Key, mayMultiplex: Bool, isolated: Bool = false) -> Int {
        if let last = lastKey, last.key == key { return last.index }
        let index: Int
        if let known = keyIndex[key] {
            index = known
        } else {
            var state = KeyState(key: key, mode: mayMultiplex ? .unknown : .single)
            state.isolated = isolated
            keys.append(state)
            index = keys.count - 1
            keyIndex[key] = index
        }
        lastKey = (key, index)
        return index
    }

    func index(of key: Key) -> Int? { keyIndex[key] }

    /// The shard a key keeps to, or -1 before it has one.
    func homeShard(of index: Int) -> Int { keys[index].homeShard }

    mutating func setHomeShard(_ shard: Int, of index: Int) { keys[index].homeShard = shard }

    /// Whether the key's connections live apart from every other key's.
    func isIsolated(_ index: Int) -> Bool { keys[index].isolated }

    func mode(of key: Key) -> KeyMode? { keyIndex[key].map { keys[$0].mode } }

    /// Waiting and running transfers per key with any.
    var keyCounts: [(key: Key, queued: Int, running: Int)] {
        keys.compactMap { state in
            state.queued == 0 && state.running == 0 ? nil : (state.key, state.queued, state.running)
        }
    }

    func counts(of index: Int) -> (queued: Int, running: Int) { (keys[index].queued, keys[index].running) }

    // MARK: Admission

    /// Whether a new transfer of the key may start at once: nothing of the key waits, and it fits.
    func mayStartNow(_ index: Int) -> Bool {
        keys[index].queued == 0 && keyHasRoom(index) && totalHasRoom(for: index)
    }

    /// A transfer of the key starts. Returns what it does about connections: for a multiplexing key
    /// whose connections are full, it opens the next one (the one opener the key may have pending) or,
    /// while the server's limit is not known, probes for one stream more.
    mutating func started(_ index: Int, id: TransferID) -> ConnectionRole {
        var role = ConnectionRole.joins
        if case .multiplexed = keys[index].mode, needsNewConnection(index) {
            if keys[index].limitKnown {
                role = .opens
                keys[index].openerPending = true
                keys[index].openerUp = false
                keys[index].opener = id
                keys[index].connectionsBeforeOpener = keys[index].openConnections
            } else {
                role = .probes
                keys[index].opener = id
                keys[index].probePending = true
                keys[index].probeTainted = false
            }
        }
        keys[index].running += 1
        recount(index)
        return role
    }

    /// A running transfer of the key ended; the key's next waiting transfer may become ready.
    mutating func released(_ index: Int, stillWaiting: (TransferID) -> UInt64?) {
        if keys[index].probePending { keys[index].probeTainted = true }
        keys[index].running -= 1
        recount(index)
        listIfReady(index, stillWaiting: stillWaiting)
    }

    /// Queues a transfer (`first`: ahead of the others, for a redirect hop) with its FIFO `order`.
    mutating func enqueue(_ id: TransferID, at index: Int, first: Bool, stillWaiting: (TransferID) -> UInt64?) {
        if first {
            keys[index].queue.prepend(id)
            keys[index].listed = false  // list again under the hop's order; the old entry goes stale
        } else {
            keys[index].queue.append(id)
        }
        keys[index].queued += 1
        queued += 1
        listIfReady(index, stillWaiting: stillWaiting)
    }

    /// A waiting transfer left without starting (cancelled, timed out); its queue entry goes stale and
    /// is dropped when it reaches the front, so this is O(1).
    mutating func abandoned(at index: Int) {
        keys[index].queued -= 1
        queued -= 1
    }

    /// Takes the next transfer to start, oldest first across keys, when limits allow.
    /// `stillWaiting` gives a waiting transfer's order, nil for one that left.
    mutating func takeNext(stillWaiting: (TransferID) -> UInt64?) -> (index: Int, id: TransferID)? {
        guard queued > 0 else { return nil }
        while let first = ready.removeFirst() {
            let index = first.element
            keys[index].listed = false
            // The entry is stale when the transfer it was listed for has left or the key has since
            // filled up; list the key again for what holds now.
            guard let head = validHead(of: index, stillWaiting: stillWaiting), stillWaiting(head) == first.deadline,
                keyHasRoom(index)
            else {
                listIfReady(index, stillWaiting: stillWaiting)
                continue
            }
            guard totalHasRoom(for: index) else {
                // The oldest ready transfer needs a connection the total limit does not allow yet: it
                // keeps its turn (FIFO across keys) until a connection frees.
                keys[index].listed = true
                ready.insert(first.deadline, index)
                return nil
            }
            keys[index].queue.removeFirst()
            keys[index].queued -= 1
            queued -= 1
            return (index, head)
        }
        return nil
    }

    /// Lists the key as ready when its first waiting transfer could start under the key's own limit.
    mutating func listIfReady(_ index: Int, stillWaiting: (TransferID) -> UInt64?) {
        guard !keys[index].listed, keys[index].queued > 0, keyHasRoom(index),
            let head = validHead(of: index, stillWaiting: stillWaiting), let order = stillWaiting(head)
        else { return }
        keys[index].listed = true
        ready.insert(order, index)
    }

    /// Forgets every transfer (shutdown); keys and their learned modes stay.
    mutating func removeAll() {
        for index in keys.indices {
            keys[index].queue = WaitQueue()
            keys[index].queued = 0
            keys[index].running = 0
            keys[index].counted = 0
            keys[index].openerPending = false
            keys[index].openerUp = false
            keys[index].probePending = false
            keys[index].listed = false
        }
        connections = 0
        queued = 0
        ready.removeAll()
    }

    // MARK: Rules

    /// Whether one more transfer fits the key's own limit: `perKey` connections; over HTTP/2 of `streams`
    /// each, opening one new connection (or probing for one stream more) at a time: libcurl would
    /// otherwise open a connection for every transfer that finds the others full.
    private func keyHasRoom(_ index: Int) -> Bool {
        let state = keys[index]
        switch state.mode {
        case .single:
            return perKey == 0 || state.running < perKey
        case .unknown:
            return state.running < (perKey == 0 ? Self.firstBurst : min(perKey, Self.firstBurst))
        case .multiplexed(let streams):
            if state.running < state.capacity(streams: streams) { return true }
            return !state.openerPending && !state.probePending && (perKey == 0 || state.openConnections < perKey)
        }
    }

    /// Whether one more transfer of the key fits the total limit: it does when it joins a connection of
    /// the key that has a free stream, when another connection may be opened, or when it probes.
    private func totalHasRoom(for index: Int) -> Bool {
        total == 0 || !needsNewConnection(index) || connections < total || probes(index)
    }

    /// Whether the key's next transfer would probe for one stream more. A probe goes even when the total
    /// limit is reached: it most often joins a connection, and when it does need one of its own, libcurl
    /// (which has the total limit as a backstop) holds it until a connection closes.
    private func probes(_ index: Int) -> Bool {
        guard case .multiplexed = keys[index].mode else { return false }
        return !keys[index].limitKnown && keys[index].openConnections > 0
    }

    /// Whether one more transfer of the key needs a connection of its own.
    private func needsNewConnection(_ index: Int) -> Bool {
        switch keys[index].mode {
        case .single, .unknown: true
        case .multiplexed(let streams): keys[index].running >= keys[index].capacity(streams: streams)
        }
    }

    /// The key's connections in use, as the total limit counts them.
    private func connectionsInUse(_ index: Int) -> Int {
        switch keys[index].mode {
        case .single, .unknown: keys[index].running
        case .multiplexed: keys[index].running > 0 ? max(1, keys[index].openConnections) : 0
        }
    }

    mutating func recount(_ index: Int) {
        let now = connectionsInUse(index)
        connections += now - keys[index].counted
        keys[index].counted = now
    }

    /// The first identifier in the key's queue that still waits, dropping stale ones.
    private mutating func validHead(of index: Int, stillWaiting: (TransferID) -> UInt64?) -> TransferID? {
        while let id = keys[index].queue.first {
            if stillWaiting(id) != nil { return id }
            keys[index].queue.removeFirst()
        }
        return nil
    }
}
