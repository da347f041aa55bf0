// Curlew — what the machine learns about a key's connections (its protocol, connections opened and
// ready) and admits because of it; counts per key.

extension TransferStateMachine {
    /// The key's first response told its protocol: HTTP/2, with at most `streamCap` streams per
    /// connection (the client's cap), or HTTP/1.1 (`multiplexes` false: one transfer per connection from
    /// now on). `openConnections` is how many connections the key has now, `attached` how many of its
    /// transfers curl has put on them, `overflow` how many were on the first connection when curl had to
    /// open another (the first burst did not fit).
    mutating func learnedProtocol(
        multiplexes: Bool, streamCap: Int, openConnections: Int, attached: Int = 0, overflow: Int? = nil, for key: Key,
        now: UInt64, into actions: inout [Action]
    ) {
        guard !isShutDown, let index = admission.index(of: key),
            admission.learnedProtocol(
                multiplexes: multiplexes, streamCap: streamCap, openConnections: openConnections, attached: attached,
                overflow: overflow, at: index)
        else { return }
        admitAfterChange(of: index, now: now, into: &actions)
    }

    /// The connection the key's pending opener opened is up: streams may join it before its response.
    mutating func connectionUp(for key: Key, opener: TransferID, now: UInt64, into actions: inout [Action]) {
        guard !isShutDown, let index = admission.index(of: key), admission.connectionUp(at: index, opener: opener)
        else { return }
        admitAfterChange(of: index, now: now, into: &actions)
    }

    /// The key's probe joined a connection (see ``ConnectionRole/probes``).
    mutating func probeJoined(for key: Key, now: UInt64, into actions: inout [Action]) {
        guard !isShutDown, let index = admission.index(of: key), admission.probeJoined(at: index) else { return }
        admitAfterChange(of: index, now: now, into: &actions)
    }

    /// curl opened a connection for the key's probe while `attached` of its transfers were on the
    /// connections open before; `openConnections` counts the new one.
    mutating func probeOpened(
        attached: Int, openConnections: Int, for key: Key, now: UInt64, into actions: inout [Action]
    ) {
        guard !isShutDown, let index = admission.index(of: key),
            admission.probeOpened(attached: attached, openConnections: openConnections, at: index)
        else { return }
        admitAfterChange(of: index, now: now, into: &actions)
    }

    /// The key's probe ended before curl placed it.
    mutating func probeEnded(for key: Key, now: UInt64, into actions: inout [Action]) {
        guard !isShutDown, let index = admission.index(of: key), admission.probeEnded(at: index) else { return }
        admitAfterChange(of: index, now: now, into: &actions)
    }

    /// A multiplexing key's connections changed (curl opened or closed one). `unexpected`: a transfer
    /// not admitted to open one made curl open it, because the connections were full at fewer streams
    /// than assumed: the server allows fewer, and the key's streams per connection drop to what the
    /// `attached` transfers show fitted.
    mutating func connectionsChanged(
        openConnections: Int, unexpected: Bool, attached: Int = 0, for key: Key, now: UInt64,
        into actions: inout [Action]
    ) {
        guard !isShutDown, let index = admission.index(of: key),
            admission.connectionsChanged(
                openConnections: openConnections, unexpected: unexpected, attached: attached, at: index)
        else { return }
        admitAfterChange(of: index, now: now, into: &actions)
    }

    /// The new connection a transfer was admitted to open is in use (its response arrived) or will not
    /// be (the transfer ended first): more transfers may be admitted.
    mutating func connectionReady(for key: Key, opener: TransferID? = nil, now: UInt64, into actions: inout [Action]) {
        guard !isShutDown, let index = admission.index(of: key), admission.connectionReady(at: index, opener: opener)
        else { return }
        admitAfterChange(of: index, now: now, into: &actions)
    }

    /// Waiting and running transfers per key, for statistics.
    var keyCounts: [(key: Key, queued: Int, running: Int)] { admission.keyCounts }

    /// Waiting and running transfers for one key.
    func counts(for key: Key) -> (queued: Int, running: Int) {
        admission.index(of: key).map { admission.counts(of: $0) } ?? (0, 0)
    }

    /// How a key uses connections (for tests and statistics).
    func mode(of key: Key) -> KeyMode? { admission.mode(of: key) }
}
