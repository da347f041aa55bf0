// Curlew — one key's connection record in the ledger, and how each fact changes it.

extension ConnectionLedger {
    /// What curl's callbacks have shown of one key's connections.
    struct Record: Sendable, Equatable {
        /// Sockets open now, and the most that were open at once.
        var openSockets = 0
        var peakOpenSockets = 0
        /// Transfers curl has put on the key's connections and that have not ended: what the connections
        /// carry, from which the server's stream limit shows. Counted for keys that may multiplex only
        /// (curl's pre-request callback is set for those only).
        var attached = 0
        /// What the key's first response came over: nil until then, `true` for HTTP/2. Learned for keys
        /// that may multiplex only.
        var multiplexes: Bool?
        /// The transfers on the first connection when curl first opened another while the protocol was
        /// not known: over HTTP/2, the server's stream limit (the first burst did not fit). Told to the
        /// machine once, with the protocol.
        var firstOverflow: Int?

        /// See ``ConnectionLedger/socketOpened(_:by:mayMultiplex:into:)``.
        mutating func socketOpened(
            _ key: Key, by transfer: inout Transfer, mayMultiplex: Bool, into findings: inout [Finding]
        ) {
            if transfer.probes {
                // The connections were full: the probe opens the next one.
                transfer.probes = false
                transfer.opensConnection = true
                findings.append(.probeOpened(key, attached: attached))
            } else if multiplexes == true {
                findings.append(.connectionsChanged(key, unexpected: !transfer.opensConnection))
            } else if openSockets >= 1, multiplexes == nil, firstOverflow == nil, mayMultiplex {
                // curl opens another connection before the first has answered only when the first is full.
                firstOverflow = attached
            }
            openSockets += 1
            if openSockets > peakOpenSockets { peakOpenSockets = openSockets }
        }

        /// See ``ConnectionLedger/socketClosed(_:into:)``.
        mutating func socketClosed(_ key: Key, into findings: inout [Finding]) {
            openSockets = max(0, openSockets - 1)
            if multiplexes == true { findings.append(.connectionsChanged(key, unexpected: false)) }
        }

        /// An attached transfer ended.
        mutating func detach() { attached = max(0, attached - 1) }

        /// The key's first response came over HTTP/2 (`multiplexes`) or HTTP/1.x; later ones teach nothing.
        mutating func learn(_ key: Key, multiplexes: Bool, into findings: inout [Finding]) {
            guard self.multiplexes == nil else { return }
            self.multiplexes = multiplexes
            findings.append(.protocolLearned(key, multiplexes: multiplexes))
        }
    }
}
