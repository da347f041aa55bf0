// Curlew — the admission table's multiplexing rules: learning a key's protocol and the streams its
// server allows per connection (probes), and pacing the openers of further connections.

extension AdmissionTable {
    /// The key's first response told its protocol (see ``TransferStateMachine/learnedProtocol``).
    /// Returns false when there was nothing to learn.
    ///
    /// Over HTTP/2 the streams per connection start at what the first connection carries now (the
    /// transfers admitted while the protocol was unknown all wait for it), or, when curl already had to
    /// open more connections (the server allows fewer), what the first carried then (`overflow`);
    /// further streams are probed for one at a time up to `streamCap`.
    mutating func learnedProtocol(
        multiplexes: Bool, streamCap: Int, openConnections: Int, attached: Int, overflow: Int? = nil, at index: Int
    ) -> Bool {
        guard keys[index].mode == .unknown else { return false }
        let cap = max(1, streamCap)
        keys[index].streamCap = cap
        if multiplexes {
            let open = max(1, openConnections)
            // The first burst overflowed the first connection: what it held then is the server's limit.
            let carried = overflow ?? (open == 1 ? keys[index].running : attached / open)
            let streams = max(1, min(cap, carried))
            keys[index].mode = .multiplexed(streams: streams)
            keys[index].limitKnown = streams >= cap || overflow != nil || open > 1
        } else {
            keys[index].mode = .single
        }
        keys[index].openConnections = max(1, openConnections)
        recount(index)
        return true
    }

    /// A multiplexing key's connections changed (see ``TransferStateMachine/connectionsChanged``).
    /// `unexpected`: curl opened one for a transfer that was not admitted to: the connections were full
    /// at fewer streams than assumed, and the `attached` transfers on them show the server's limit.
    mutating func connectionsChanged(openConnections: Int, unexpected: Bool, attached: Int, at index: Int) -> Bool {
        guard case .multiplexed(let streams) = keys[index].mode else { return false }
        if unexpected, keys[index].openConnections > 0 {
            let fitted = attached / max(1, keys[index].usableConnections)
            keys[index].mode = .multiplexed(streams: max(1, min(streams, fitted)))
            keys[index].limitKnown = true
        }
        keys[index].openConnections = openConnections
        recount(index)
        return true
    }

    /// The pending probe joined a connection: the connections take one stream more than assumed (unless
    /// a stream ended meanwhile, which the probe may have taken). Returns false when nothing changed.
    mutating func probeJoined(at index: Int) -> Bool {
        guard keys[index].probePending, case .multiplexed(let streams) = keys[index].mode else { return false }
        keys[index].probePending = false
        if !keys[index].probeTainted {
            let raised = min(streams + 1, keys[index].streamCap)
            keys[index].mode = .multiplexed(streams: raised)
            if raised >= keys[index].streamCap { keys[index].limitKnown = true }
        }
        return true
    }

    /// curl opened a connection for the pending probe: the connections were full, so the server's limit
    /// is what they carry (`attached` transfers over the connections open before it). The probe is the
    /// key's pending opener from now on.
    mutating func probeOpened(attached: Int, openConnections: Int, at index: Int) -> Bool {
        guard keys[index].probePending, case .multiplexed(let streams) = keys[index].mode else { return false }
        keys[index].probePending = false
        let before = max(1, keys[index].openConnections)
        let fitted = max(1, min(keys[index].streamCap, attached / before))
        keys[index].mode = .multiplexed(streams: keys[index].probeTainted ? min(streams, fitted) : fitted)
        keys[index].limitKnown = true
        keys[index].openerPending = true
        keys[index].openerUp = false
        keys[index].connectionsBeforeOpener = keys[index].openConnections
        keys[index].openConnections = openConnections
        recount(index)
        return true
    }

    /// The pending probe ended before curl placed it; the next one may try.
    mutating func probeEnded(at index: Int) -> Bool {
        guard keys[index].probePending else { return false }
        keys[index].probePending = false
        return true
    }

    /// The key's pending opener is done (see ``TransferStateMachine/connectionReady``).
    mutating func connectionReady(at index: Int, opener: TransferID?) -> Bool {
        guard keys[index].openerPending, opener == nil || opener == keys[index].opener else { return false }
        keys[index].openerPending = false
        keys[index].openerUp = false
        return true
    }

    /// The pending opener's connection is up: it may carry streams before its first response (what
    /// libcurl allows before the server's settings arrive, at most the key's streams). It stays the
    /// pending opener until that response: a further opener could otherwise be put on this connection
    /// by libcurl, still counting on its default, and be refused by the server. Returns false when
    /// nothing changed.
    mutating func connectionUp(at index: Int, opener: TransferID) -> Bool {
        guard keys[index].openerPending, !keys[index].openerUp, opener == keys[index].opener,
            case .multiplexed = keys[index].mode
        else { return false }
        keys[index].openerUp = true
        return true
    }
}
