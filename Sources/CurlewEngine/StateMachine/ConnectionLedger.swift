// Curlew — the loop's connection records as a pure value: raw facts from curl's callbacks in, what the
// admission machine must hear out.

/// What the loop knows of each pool key's connections: sockets open and the most at once, the transfers
/// curl has put on them, the protocol the key's first response came over, and what the first burst showed
/// of the server's stream limit (see ``Record``).
///
/// It is fed raw facts from curl's callbacks (a socket opened or closed, a transfer put on a connection or
/// ended, a response head arrived) and decides from them what ``TransferStateMachine`` must hear: the
/// ``Finding``s it appends to a buffer the caller reuses, told to the machine once curl has returned
/// (``tell(_:to:streamCap:now:into:)``). It performs no I/O; the loop thread owns the only instance and
/// the table tests drive it directly. One transfer's part (``Transfer``) is kept by the caller beside the
/// transfer and passed in.
struct ConnectionLedger<Key: Hashable & Sendable>: Sendable {
    /// Every key with a record: any key curl opened a socket for, or a key that may multiplex once one
    /// of its transfers was placed or answered.
    private(set) var records: [Key: Record] = [:]

    /// An empty ledger.
    init() {}

    // MARK: Facts

    /// curl opened a socket for `transfer`'s new connection to `key`; `mayMultiplex`: the key may speak
    /// HTTP/2. A probe that needed a connection of its own becomes the key's opener; on an HTTP/2 key a
    /// connection that no opener asked for is unexpected; before the protocol is known, a second
    /// connection records what the first one carried.
    mutating func socketOpened(
        _ key: Key, by transfer: inout Transfer, mayMultiplex: Bool, into findings: inout [Finding]
    ) {
        transfer.openedSocket = true
        // One lookup for every change to the key's record (the subscript's accessor changes it in place).
        records[key, default: Record()].socketOpened(key, by: &transfer, mayMultiplex: mayMultiplex, into: &findings)
    }

    /// curl closed a socket of `key`'s.
    mutating func socketClosed(_ key: Key, into findings: inout [Finding]) {
        records[key]?.socketClosed(key, into: &findings)
    }

    /// curl put a transfer of a key that may multiplex on a connection (its pre-request callback, before
    /// the request is sent on a new or reused connection): counted once; the connection an opener opened
    /// is up, and a probe that did not need a connection of its own joined.
    mutating func transferAttached(_ key: Key, _ transfer: inout Transfer, into findings: inout [Finding]) {
        guard !transfer.attached else { return }
        transfer.attached = true
        records[key, default: Record()].attached += 1
        if transfer.opensConnection, transfer.openedSocket { findings.append(.connectionUp(key, opener: transfer.id)) }
        if transfer.probes {
            transfer.probes = false
            findings.append(.probeJoined(key))
        }
    }

    /// A transfer of `key` left curl: an opener still pending lets the next one try, a probe curl never
    /// placed lets the next probe go, and an attached transfer no longer counts.
    mutating func transferEnded(_ key: Key, _ transfer: inout Transfer, into findings: inout [Finding]) {
        if transfer.opensConnection {
            transfer.opensConnection = false
            findings.append(.connectionReady(key, opener: transfer.id))
        }
        if transfer.probes {
            transfer.probes = false
            findings.append(.probeEnded(key))
        }
        if transfer.attached {
            transfer.attached = false
            records[key]?.detach()
        }
    }

    /// A response head of `key` arrived for `transfer` (over HTTP/2 when `http2`): an opener's connection
    /// is in use, and a key that may multiplex (`mayMultiplex`) learns its protocol from its first one.
    mutating func headArrived(
        _ key: Key, of transfer: inout Transfer, http2: Bool, mayMultiplex: Bool, into findings: inout [Finding]
    ) {
        if transfer.opensConnection {
            transfer.opensConnection = false
            findings.append(.connectionReady(key, opener: transfer.id))
        }
        // A key that cannot multiplex has nothing to learn: no lookup for it.
        guard mayMultiplex else { return }
        records[key, default: Record()].learn(key, multiplexes: http2, into: &findings)
    }

    /// The key's record as the machine hears its protocol: its first overflow is told once, then dropped.
    mutating func recordForProtocol(of key: Key) -> Record {
        let record = records[key] ?? Record()
        if record.firstOverflow != nil { records[key]?.firstOverflow = nil }
        return record
    }

    // MARK: Queries

    /// What is known of the key's connections (an empty record for a key never seen).
    func record(of key: Key) -> Record { records[key] ?? Record() }

    /// Whether the key's first response came over HTTP/2; nil until it has arrived (or for a key that
    /// cannot multiplex).
    func multiplexes(_ key: Key) -> Bool? { records[key]?.multiplexes }

    /// Open and peak sockets of every key curl ever opened one for, for statistics.
    var socketCounts: [(key: Key, open: Int, peak: Int)] {
        records.compactMap { key, record in
            record.peakOpenSockets > 0 ? (key, record.openSockets, record.peakOpenSockets) : nil
        }
    }
}
