// Curlew — what the machine learns about a key's connections (its protocol, connections opened and
// ready) and admits because of it; counts per key.

extension TransferStateMachine {
    /// The key's first response told its protocol: HTTP/2 with `streams` per connection (the client's
    /// cap), or HTTP/1.1 (`multiplexes` false: one transfer per connection from now on).
    /// `openConnections` is how many connections the key has now.
    mutating func learnedProtocol(
        multiplexes: Bool, streams: Int, openConnections: Int, for key: Key, now: UInt64, into actions: inout [Action]
    ) {
        guard !isShutDown, let index = admission.index(of: key),
            admission.learnedProtocol(multiplexes: multiplexes, streams: streams, openConnections: openConnections, at: index)
        else { return }
        admitAfterChange(of: index, now: now, into: &actions)
    }

    /// A multiplexing key's connections changed (curl opened or closed one). `unexpected`: a transfer
    /// not admitted to open one made curl open it, because the connections were full at fewer streams
    /// than assumed: the server allows fewer, and the key's streams per connection drop to what fitted.
    mutating func connectionsChanged(
        openConnections: Int, unexpected: Bool, for key: Key, now: UInt64, into actions: inout [Action]
    ) {
        guard !isShutDown, let index = admission.index(of: key),
            admission.connectionsChanged(openConnections: openConnections, unexpected: unexpected, at: index)
        else { return }
        admitAfterChange(of: index, now: now, into: &actions)
    }

    /// The new connection a transfer was admitted to open is in use (its response arrived) or will not
    /// be (the transfer ended first): more transfers may be admitted.
    mutating func connectionReady(for key: Key, now: UInt64, into actions: inout [Action]) {
        guard !isShutDown, let index = admission.index(of: key), admission.connectionReady(at: index) else { return }
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
