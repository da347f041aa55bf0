// Curlew — the connection ledger, fact by fact: what each sequence of curl's callbacks leaves in the
// records and tells the admission machine; then cold bursts replayed through the ledger and the machine.

@testable import CurlewEngine
import Testing

private typealias Ledger = ConnectionLedger<String>
private typealias Finding = Ledger.Finding
private typealias Record = Ledger.Record

/// Transfer `n`'s identifier.
private func tid(_ n: Int) -> TransferID { TransferID(slot: UInt32(n), generation: 0) }

/// A record, with the fields a row sets.
private func record(
    open: Int = 0, peak: Int = 0, attached: Int = 0, multiplexes: Bool? = nil, overflow: Int? = nil
) -> Record {
    Record(openSockets: open, peakOpenSockets: peak, attached: attached, multiplexes: multiplexes, firstOverflow: overflow)
}

/// One of curl's callbacks, as the loop reports it to the ledger; `n` names the transfer.
private enum Fact: Sendable, CustomStringConvertible {
    case opened(Int, key: String = "a", mayMultiplex: Bool = true)
    case closed(key: String = "a")
    case attached(Int, key: String = "a")
    case ended(Int, key: String = "a")
    case head(Int, key: String = "a", http2: Bool = true, mayMultiplex: Bool = true)

    var description: String {
        switch self {
        case .opened(let n, let key, let may): "opened \(key) by \(n)\(may ? "" : " (HTTP/1 only)")"
        case .closed(let key): "closed \(key)"
        case .attached(let n, let key): "attached \(n) to \(key)"
        case .ended(let n, let key): "ended \(n) of \(key)"
        case .head(let n, let key, let http2, let may): "head \(n) of \(key) \(http2 ? "h2" : "h1")\(may ? "" : " (HTTP/1 only)")"
        }
    }
}

/// A transfer's flags after a row, comparable.
private struct Flags: Equatable, Sendable, CustomStringConvertible {
    var opens = false
    var probes = false
    var attached = false
    var socket = false

    init(opens: Bool = false, probes: Bool = false, attached: Bool = false, socket: Bool = false) {
        self.opens = opens
        self.probes = probes
        self.attached = attached
        self.socket = socket
    }

    init(_ transfer: Ledger.Transfer) {
        self.init(opens: transfer.opensConnection, probes: transfer.probes, attached: transfer.attached, socket: transfer.openedSocket)
    }

    var description: String { "opens \(opens) probes \(probes) attached \(attached) socket \(socket)" }
}

/// A ledger fed facts, with the transfers it decides on (each started with its row's role).
private struct Feeder {
    var ledger = Ledger()
    var transfers: [Int: Ledger.Transfer] = [:]
    let roles: [Int: ConnectionRole]

    init(roles: [Int: ConnectionRole] = [:]) { self.roles = roles }

    /// Applies the facts in order; returns every finding.
    mutating func feed(_ facts: [Fact]) -> [Finding] {
        var findings: [Finding] = []
        for fact in facts {
            switch fact {
            case .opened(let n, let key, let may):
                let fresh = transfer(n)
                ledger.socketOpened(key, by: &transfers[n, default: fresh], mayMultiplex: may, into: &findings)
            case .closed(let key):
                ledger.socketClosed(key, into: &findings)
            case .attached(let n, let key):
                let fresh = transfer(n)
                ledger.transferAttached(key, &transfers[n, default: fresh], into: &findings)
            case .ended(let n, let key):
                let fresh = transfer(n)
                ledger.transferEnded(key, &transfers[n, default: fresh], into: &findings)
            case .head(let n, let key, let http2, let may):
                let fresh = transfer(n)
                ledger.headArrived(
                    key, of: &transfers[n, default: fresh], http2: http2, mayMultiplex: may, into: &findings)
            }
        }
        return findings
    }

    /// Transfer `n` as the machine started it.
    private func transfer(_ n: Int) -> Ledger.Transfer { Ledger.Transfer(id: tid(n), role: roles[n] ?? .joins) }
}

/// One row: transfers started with `roles` (`.joins` unless named), the facts in order, and what must
/// come of them: every finding, every key's record, and (where given) transfers' flags.
private struct Row: Sendable, CustomTestStringConvertible {
    let name: String
    var roles: [Int: ConnectionRole] = [:]
    let facts: [Fact]
    let findings: [Finding]
    let records: [String: Record]
    var flags: [Int: Flags] = [:]

    var testDescription: String { name }
}

/// Facts `attached` for transfers `range` of key "a".
private func attach(_ range: Range<Int>) -> [Fact] { range.map { .attached($0) } }

/// A key "a" that answered over HTTP/2 on one connection carrying transfers 0..<`carried`.
private func http2Key(carrying carried: Int) -> [Fact] { [.opened(0)] + attach(0..<carried) + [.head(0)] }

// MARK: - The tables

private let protocolRows: [Row] = [
    Row(
        name: "an HTTP/2 head teaches the protocol", facts: [.opened(0), .attached(0), .head(0, http2: true)],
        findings: [.protocolLearned("a", multiplexes: true)],
        records: ["a": record(open: 1, peak: 1, attached: 1, multiplexes: true)]),
    Row(
        name: "an HTTP/1.1 head teaches the protocol", facts: [.opened(0), .attached(0), .head(0, http2: false)],
        findings: [.protocolLearned("a", multiplexes: false)],
        records: ["a": record(open: 1, peak: 1, attached: 1, multiplexes: false)]),
    Row(
        name: "later heads teach nothing",
        facts: [.opened(0), .attached(0), .attached(1), .head(0, http2: true), .head(1, http2: false), .head(0, http2: false)],
        findings: [.protocolLearned("a", multiplexes: true)],
        records: ["a": record(open: 1, peak: 1, attached: 2, multiplexes: true)]),
    Row(
        name: "a key that cannot multiplex learns nothing and is not looked up",
        facts: [.head(0, http2: false, mayMultiplex: false), .head(1, http2: true, mayMultiplex: false)],
        findings: [], records: [:]),
    Row(
        name: "each key learns once",
        facts: [
            .head(0, key: "a", http2: true), .head(1, key: "b", http2: false), .head(2, key: "a", http2: false),
            .head(3, key: "b", http2: true),
        ],
        findings: [.protocolLearned("a", multiplexes: true), .protocolLearned("b", multiplexes: false)],
        records: ["a": record(multiplexes: true), "b": record(multiplexes: false)]),
]

private let socketRows: [Row] = [
    Row(
        name: "three open, two close",
        facts: [
            .opened(0, mayMultiplex: false), .opened(1, mayMultiplex: false), .opened(2, mayMultiplex: false),
            .closed(), .closed(),
        ],
        findings: [], records: ["a": record(open: 1, peak: 3)],
        flags: [0: Flags(socket: true), 1: Flags(socket: true), 2: Flags(socket: true)]),
    Row(
        name: "the peak stays when sockets close and reopen",
        facts: [
            .opened(0, mayMultiplex: false), .opened(1, mayMultiplex: false), .closed(), .closed(),
            .opened(2, mayMultiplex: false),
        ],
        findings: [], records: ["a": record(open: 1, peak: 2)]),
    Row(
        name: "more closes than opens stay at zero",
        facts: [.opened(0, mayMultiplex: false), .closed(), .closed()],
        findings: [], records: ["a": record(open: 0, peak: 1)]),
    Row(
        name: "a close for a key never opened is ignored", facts: [.closed(key: "z")], findings: [], records: [:]),
    Row(
        name: "keys count apart",
        facts: [
            .opened(0, key: "a", mayMultiplex: false), .opened(1, key: "b", mayMultiplex: false),
            .opened(2, key: "b", mayMultiplex: false), .closed(key: "a"),
        ],
        findings: [], records: ["a": record(open: 0, peak: 1), "b": record(open: 2, peak: 2)]),
    Row(
        name: "an HTTP/2 key's closes are told",
        facts: http2Key(carrying: 1) + [.closed(), .closed()],
        findings: [
            .protocolLearned("a", multiplexes: true), .connectionsChanged("a", unexpected: false),
            .connectionsChanged("a", unexpected: false),
        ],
        records: ["a": record(open: 0, peak: 1, attached: 1, multiplexes: true)]),
    Row(
        name: "an HTTP/1.1 key's closes are not told",
        facts: [.opened(0), .attached(0), .head(0, http2: false), .closed()],
        findings: [.protocolLearned("a", multiplexes: false)],
        records: ["a": record(open: 0, peak: 1, attached: 1, multiplexes: false)]),
]

private let attachRows: [Row] = [
    Row(
        name: "three attached", facts: attach(0..<3), findings: [],
        records: ["a": record(attached: 3)], flags: [0: Flags(attached: true), 2: Flags(attached: true)]),
    Row(
        name: "a transfer attached twice counts once", facts: [.attached(0), .attached(0)], findings: [],
        records: ["a": record(attached: 1)]),
    Row(
        name: "an ended transfer stops counting, once",
        facts: attach(0..<3) + [.ended(1), .ended(1)], findings: [],
        records: ["a": record(attached: 2)], flags: [1: Flags()]),
    Row(
        name: "a transfer ended unattached changes nothing", facts: [.ended(0)], findings: [], records: [:]),
    Row(
        name: "all detached", facts: attach(0..<2) + [.ended(0), .ended(1)], findings: [],
        records: ["a": record(attached: 0)]),
    Row(
        name: "keys count apart", facts: [.attached(0, key: "a"), .attached(1, key: "b"), .attached(2, key: "b")],
        findings: [], records: ["a": record(attached: 1), "b": record(attached: 2)]),
]

private let overflowRows: [Row] = [
    Row(
        name: "8 on the first connection when curl opened a second",
        facts: [.opened(0)] + attach(0..<8) + [.opened(8), .attached(8), .opened(9)],
        findings: [], records: ["a": record(open: 3, peak: 3, attached: 9, overflow: 8)]),
    Row(
        name: "the first overflow is kept, later ones are not",
        facts: [.opened(0)] + attach(0..<3) + [.opened(3)] + attach(3..<6) + [.opened(6)],
        findings: [], records: ["a": record(open: 3, peak: 3, attached: 6, overflow: 3)]),
    Row(
        name: "nothing attached yet: an overflow of 0",
        facts: [.opened(0), .opened(1)],
        findings: [], records: ["a": record(open: 2, peak: 2, overflow: 0)]),
    Row(
        name: "a key that cannot multiplex has no overflow",
        facts: [.opened(0, mayMultiplex: false), .opened(1, mayMultiplex: false)],
        findings: [], records: ["a": record(open: 2, peak: 2)]),
    Row(
        name: "no overflow once the protocol is known",
        facts: [.opened(0), .attached(0), .head(0, http2: false), .opened(1)],
        findings: [.protocolLearned("a", multiplexes: false)],
        records: ["a": record(open: 2, peak: 2, attached: 1, multiplexes: false)]),
    Row(
        name: "no overflow when the first connection closed before the next opened",
        facts: [.opened(0), .attached(0), .closed(), .opened(1)],
        findings: [], records: ["a": record(open: 1, peak: 1, attached: 1)]),
]

private let probeRows: [Row] = [
    Row(
        name: "a probe that joins", roles: [5: .probes],
        facts: http2Key(carrying: 5) + [.attached(5)],
        findings: [.protocolLearned("a", multiplexes: true), .probeJoined("a")],
        records: ["a": record(open: 1, peak: 1, attached: 6, multiplexes: true)],
        flags: [5: Flags(attached: true)]),
    Row(
        name: "a probe that opens a connection reports what the others carry, then is the opener", roles: [5: .probes],
        facts: http2Key(carrying: 5) + [.opened(5), .attached(5), .head(5)],
        findings: [
            .protocolLearned("a", multiplexes: true), .probeOpened("a", attached: 5), .connectionUp("a", opener: tid(5)),
            .connectionReady("a", opener: tid(5)),
        ],
        records: ["a": record(open: 2, peak: 2, attached: 6, multiplexes: true)],
        flags: [5: Flags(attached: true, socket: true)]),
    Row(
        name: "a probe that ends unplaced, once", roles: [5: .probes],
        facts: http2Key(carrying: 5) + [.ended(5), .ended(5)],
        findings: [.protocolLearned("a", multiplexes: true), .probeEnded("a")],
        records: ["a": record(open: 1, peak: 1, attached: 5, multiplexes: true)], flags: [5: Flags()]),
    Row(
        name: "a probe that joined then ended only stops counting", roles: [5: .probes],
        facts: http2Key(carrying: 5) + [.attached(5), .ended(5)],
        findings: [.protocolLearned("a", multiplexes: true), .probeJoined("a")],
        records: ["a": record(open: 1, peak: 1, attached: 5, multiplexes: true)]),
    Row(
        name: "a probe whose connection opened and then ended before its response frees the opener",
        roles: [5: .probes],
        facts: http2Key(carrying: 5) + [.opened(5), .ended(5), .closed()],
        findings: [
            .protocolLearned("a", multiplexes: true), .probeOpened("a", attached: 5),
            .connectionReady("a", opener: tid(5)), .connectionsChanged("a", unexpected: false),
        ],
        records: ["a": record(open: 1, peak: 2, attached: 5, multiplexes: true)],
        flags: [5: Flags(socket: true)]),
]

private let openerRows: [Row] = [
    Row(
        name: "an opener's connection is expected, up when it attaches, ready at its head, once", roles: [3: .opens],
        facts: http2Key(carrying: 3) + [.opened(3), .attached(3), .head(3), .head(3)],
        findings: [
            .protocolLearned("a", multiplexes: true), .connectionsChanged("a", unexpected: false),
            .connectionUp("a", opener: tid(3)), .connectionReady("a", opener: tid(3)),
        ],
        records: ["a": record(open: 2, peak: 2, attached: 4, multiplexes: true)],
        flags: [3: Flags(attached: true, socket: true)]),
    Row(
        name: "an opener curl put on an open connection is not up, and is ready at its head", roles: [3: .opens],
        facts: http2Key(carrying: 3) + [.attached(3), .head(3)],
        findings: [.protocolLearned("a", multiplexes: true), .connectionReady("a", opener: tid(3))],
        records: ["a": record(open: 1, peak: 1, attached: 4, multiplexes: true)],
        flags: [3: Flags(attached: true)]),
    Row(
        name: "an opener that ends before its response lets the next one try", roles: [3: .opens],
        facts: http2Key(carrying: 3) + [.opened(3), .ended(3), .ended(3)],
        findings: [
            .protocolLearned("a", multiplexes: true), .connectionsChanged("a", unexpected: false),
            .connectionReady("a", opener: tid(3)),
        ],
        records: ["a": record(open: 2, peak: 2, attached: 3, multiplexes: true)], flags: [3: Flags(socket: true)]),
]

private let unexpectedRows: [Row] = [
    Row(
        name: "a connection no transfer was admitted to open is unexpected",
        facts: http2Key(carrying: 7) + [.opened(7), .attached(7)],
        findings: [.protocolLearned("a", multiplexes: true), .connectionsChanged("a", unexpected: true)],
        records: ["a": record(open: 2, peak: 2, attached: 8, multiplexes: true)]),
    Row(
        name: "a joining transfer's new connection after an opener's is unexpected too", roles: [3: .opens],
        facts: http2Key(carrying: 3) + [.opened(3), .opened(4)],
        findings: [
            .protocolLearned("a", multiplexes: true), .connectionsChanged("a", unexpected: false),
            .connectionsChanged("a", unexpected: true),
        ],
        records: ["a": record(open: 3, peak: 3, attached: 3, multiplexes: true)]),
    Row(
        name: "an HTTP/1.1 key's connections are only counted",
        facts: [.opened(0), .attached(0), .head(0, http2: false), .opened(1), .opened(2)],
        findings: [.protocolLearned("a", multiplexes: false)],
        records: ["a": record(open: 3, peak: 3, attached: 1, multiplexes: false)]),
]

// MARK: - A cold burst replayed through the ledger and the machine

/// 500 (or `count`) requests submitted at once to a key that may multiplex, against a server allowing
/// `limit` streams per connection, with curl modelled as it places transfers: on the first connection
/// with a free stream, else on a socket it opens. Every fact goes through the ledger, every finding
/// through ``ConnectionLedger/tell(_:to:streamCap:now:into:)`` to the machine, every start back to curl.
private struct ColdBurst {
    typealias Machine = TransferStateMachine<String, Int>
    var machine = Machine(limits: .init(perKey: 0, total: 0, shardSize: 256, idleTimeout: nil))
    var ledger = Ledger()
    let limit: Int
    let streamCap: Int
    /// Streams each of curl's connections carries.
    var connections: [Int] = []
    /// Transfers on a connection whose response head has not arrived.
    var awaitingHead: [Ledger.Transfer] = []
    /// Every finding the ledger made, in order.
    var told: [Finding] = []
    private var findings: [Finding] = []
    private var actions: [Machine.Action] = []

    init(limit: Int, streamCap: Int = 256) {
        self.limit = limit
        self.streamCap = streamCap
    }

    /// Submits `count` requests, then lets curl, the ledger and the machine run until nothing changes:
    /// heads arrive for every placed transfer once the pass that placed them is over.
    mutating func run(_ count: Int) {
        for n in 0..<count { machine.submit(n, key: "a", deadline: nil, mayMultiplex: true, now: 0, into: &actions) }
        settle()
        while !awaitingHead.isEmpty {
            let heads = awaitingHead
            awaitingHead.removeAll()
            for var transfer in heads {
                ledger.headArrived("a", of: &transfer, http2: true, mayMultiplex: true, into: &findings)
            }
            settle()
        }
    }

    /// Places what the machine started and tells it what the ledger found, until neither has more.
    private mutating func settle() {
        while !actions.isEmpty || !findings.isEmpty {
            let started = actions
            actions.removeAll()
            for case .start(let id, _, _, _, let role) in started { place(Ledger.Transfer(id: id, role: role)) }
            let pass = findings
            findings.removeAll()
            told += pass
            ledger.tell(pass, to: &machine, streamCap: streamCap, now: 0, into: &actions)
        }
    }

    /// curl puts the transfer on the first connection with a free stream, or opens one for it.
    private mutating func place(_ started: Ledger.Transfer) {
        var transfer = started
        if let free = connections.firstIndex(where: { $0 < limit }) {
            connections[free] += 1
        } else {
            ledger.socketOpened("a", by: &transfer, mayMultiplex: true, into: &findings)
            connections.append(1)
        }
        ledger.transferAttached("a", &transfer, into: &findings)
        awaitingHead.append(transfer)
    }

    /// How many findings `matching` holds.
    func count(_ matching: (Finding) -> Bool) -> Int { told.filter(matching).count }
}

/// A cold burst's expected outcome.
private struct BurstRow: Sendable, CustomTestStringConvertible {
    /// The server's streams per connection, the connections 500 requests need, the probes curl put on
    /// the first connection, and the probes that opened one.
    let limit: Int
    let connections: Int
    let probesJoined: Int
    let probesOpened: Int

    var testDescription: String { "\(limit)-stream server: \(connections) connections" }
}

// MARK: - Tests

@Suite struct ConnectionLedgerTests {
    /// Feeds a row's facts and checks every finding, record and listed flag.
    private func check(_ row: Row) {
        var feeder = Feeder(roles: row.roles)
        let findings = feeder.feed(row.facts)
        #expect(findings == row.findings, "\(row.name): findings")
        #expect(feeder.ledger.records == row.records, "\(row.name): records")
        for (n, flags) in row.flags {
            #expect(feeder.transfers[n].map(Flags.init) == flags, "\(row.name): transfer \(n)'s flags")
        }
    }

    @Test(arguments: protocolRows) fileprivate func theProtocolIsLearnedOncePerKey(row: Row) { check(row) }

    @Test(arguments: socketRows) fileprivate func socketsAreCountedWithTheirPeak(row: Row) { check(row) }

    @Test(arguments: attachRows) fileprivate func attachedTransfersAreCounted(row: Row) { check(row) }

    @Test(arguments: overflowRows) fileprivate func aFirstBurstThatOverflowedRecordsWhatTheFirstConnectionCarried(row: Row) { check(row) }

    @Test(arguments: probeRows) fileprivate func probesJoinOpenOrEnd(row: Row) { check(row) }

    @Test(arguments: openerRows) fileprivate func openersAreUpThenReady(row: Row) { check(row) }

    @Test(arguments: unexpectedRows) fileprivate func unexpectedConnectionsOfAMultiplexingKey(row: Row) { check(row) }

    @Test func statisticsListEveryKeyThatOpenedASocket() {
        var feeder = Feeder()
        _ = feeder.feed([
            .opened(0, key: "a"), .opened(1, key: "a"), .closed(key: "a"), .attached(2, key: "b"), .opened(3, key: "c"),
            .closed(key: "c"),
        ])
        let counts = feeder.ledger.socketCounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.open)/\($0.peak)" }
        #expect(counts == ["a 1/2", "c 0/1"])
        #expect(feeder.ledger.multiplexes("a") == nil)
        _ = feeder.feed([.head(0, key: "a", http2: true), .head(2, key: "b", http2: false)])
        #expect(feeder.ledger.multiplexes("a") == true)
        #expect(feeder.ledger.multiplexes("b") == false)
        #expect(feeder.ledger.multiplexes("c") == nil)
    }

    /// What the machine hears: the counts as they stand when it is told (after the pass's facts), and a
    /// first overflow once.
    @Test(arguments: [(8, 8), (20, 20)])
    func theMachineHearsTheFirstOverflowOnceWithTheProtocol(limit: Int, streams: Int) {
        var burst = ColdBurst(limit: limit)
        burst.run(20)
        #expect(burst.machine.mode(of: "a") == .multiplexed(streams: streams))
        #expect(burst.ledger.record(of: "a").firstOverflow == nil)
        #expect(burst.connections == (limit == 8 ? [8, 8, 4] : [20]))
        #expect(burst.machine.counts(for: "a") == (queued: 0, running: 20))
    }

    @Test func anHTTP1KeyGetsOneTransferPerConnection() {
        var machine = TransferStateMachine<String, Int>(
            limits: .init(perKey: 2, total: 0, shardSize: 256, idleTimeout: nil))
        var ledger = Ledger()
        var actions: [LoopAction<Int>] = []
        var findings: [Finding] = []
        for n in 0..<4 { machine.submit(n, key: "a", deadline: nil, mayMultiplex: true, now: 0, into: &actions) }
        #expect(actions.count == 2)
        var first = Ledger.Transfer(id: tid(0), role: .joins)
        ledger.socketOpened("a", by: &first, mayMultiplex: true, into: &findings)
        ledger.transferAttached("a", &first, into: &findings)
        ledger.headArrived("a", of: &first, http2: false, mayMultiplex: true, into: &findings)
        #expect(findings == [.protocolLearned("a", multiplexes: false)])
        actions.removeAll()
        ledger.tell(findings, to: &machine, streamCap: 256, now: 0, into: &actions)
        #expect(machine.mode(of: "a") == .single)
        #expect(actions.isEmpty)
        #expect(machine.counts(for: "a") == (queued: 2, running: 2))
    }

    /// The server's stream limit found from a cold burst of 500: the first 100 share the first connection,
    /// probes raise the streams one at a time until curl opens a connection for one (or the client's cap
    /// of 256 is reached), then connections open one at a time, each filled before the next. A server
    /// allowing fewer than 100 shows its limit in the first burst's overflow.
    @Test(arguments: [
        BurstRow(limit: 100, connections: 5, probesJoined: 0, probesOpened: 1),
        BurstRow(limit: 128, connections: 4, probesJoined: 28, probesOpened: 1),
        BurstRow(limit: 256, connections: 2, probesJoined: 156, probesOpened: 0),
        BurstRow(limit: 8, connections: 63, probesJoined: 0, probesOpened: 0),
    ])
    fileprivate func aColdBurstOf500FindsTheServersStreamLimit(row: BurstRow) {
        var burst = ColdBurst(limit: row.limit)
        burst.run(500)
        #expect(burst.machine.mode(of: "a") == .multiplexed(streams: row.limit))
        #expect(burst.machine.counts(for: "a") == (queued: 0, running: 500))
        #expect(burst.connections.count == row.connections)
        // Every connection but the last is full: no more connections than the limit needs.
        #expect(burst.connections.dropLast().allSatisfy { $0 == row.limit })
        #expect(burst.connections.reduce(0, +) == 500)
        // Every transfer still on a connection; a first overflow told once, with the protocol.
        #expect(
            burst.ledger.record(of: "a")
                == record(open: row.connections, peak: row.connections, attached: 500, multiplexes: true))
        #expect(burst.count { if case .protocolLearned = $0 { true } else { false } } == 1)
        #expect(burst.count { if case .probeJoined = $0 { true } else { false } } == row.probesJoined)
        let limit = row.limit
        #expect(burst.count { if case .probeOpened("a", attached: limit) = $0 { true } else { false } } == row.probesOpened)
        #expect(burst.count { $0 == .connectionsChanged("a", unexpected: true) } == 0)
    }
}
