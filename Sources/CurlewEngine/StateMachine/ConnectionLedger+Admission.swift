// Curlew — what the connection ledger tells the admission machine, and telling it with the counts it
// reads then.

extension ConnectionLedger {
    /// What the admission machine must hear about a key, as the ledger concluded it from facts. Counts
    /// the machine needs besides are read when it hears (``tell(_:to:streamCap:now:into:)``), after every
    /// fact of the loop's pass: what the connections carry then.
    enum Finding: Sendable, Equatable {
        /// The key's first response came over HTTP/2 (`true`) or HTTP/1.x.
        case protocolLearned(Key, multiplexes: Bool)
        /// A multiplexing key's connections changed; `unexpected`: curl opened one for a transfer that
        /// was not admitted to open one.
        case connectionsChanged(Key, unexpected: Bool)
        /// A transfer admitted to open a connection got its response, or ended.
        case connectionReady(Key, opener: TransferID)
        /// The connection a transfer was admitted to open is up (the transfer is about to send).
        case connectionUp(Key, opener: TransferID)
        /// The key's probe joined a connection.
        case probeJoined(Key)
        /// curl opened a connection for the key's probe while `attached` transfers were on the
        /// connections open before it.
        case probeOpened(Key, attached: Int)
        /// The key's probe ended before curl placed it.
        case probeEnded(Key)
    }

    /// Tells `machine` what `findings` say, in order, with the key's counts as they stand now (after every
    /// fact of the loop's pass), appending the actions it decides to `actions`. `streamCap` is the
    /// client's cap on streams per connection.
    mutating func tell<Payload>(
        _ findings: [Finding], to machine: inout TransferStateMachine<Key, Payload>, streamCap: Int, now: UInt64,
        into actions: inout [LoopAction<Payload>]
    ) {
        for finding in findings {
            switch finding {
            case .protocolLearned(let key, let multiplexes):
                let record = recordForProtocol(of: key)
                machine.learnedProtocol(
                    multiplexes: multiplexes, streamCap: streamCap, openConnections: record.openSockets,
                    attached: record.attached, overflow: record.firstOverflow, for: key, now: now, into: &actions)
            case .connectionsChanged(let key, let unexpected):
                let record = record(of: key)
                machine.connectionsChanged(
                    openConnections: record.openSockets, unexpected: unexpected, attached: record.attached, for: key,
                    now: now, into: &actions)
            case .probeJoined(let key):
                machine.probeJoined(for: key, now: now, into: &actions)
            case .probeOpened(let key, let attached):
                machine.probeOpened(
                    attached: attached, openConnections: record(of: key).openSockets, for: key, now: now, into: &actions)
            case .probeEnded(let key):
                machine.probeEnded(for: key, now: now, into: &actions)
            case .connectionReady(let key, let opener):
                machine.connectionReady(for: key, opener: opener, now: now, into: &actions)
            case .connectionUp(let key, let opener):
                machine.connectionUp(for: key, opener: opener, now: now, into: &actions)
            }
        }
    }
}
