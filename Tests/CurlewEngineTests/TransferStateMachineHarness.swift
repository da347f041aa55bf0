// Curlew — the loop's state machine driven event by event with plain strings as payloads, its actions
// rendered as text: shared by the machine's table tests.

@testable import CurlewEngine

/// A machine under test with its action buffer, driven with plain strings as payloads.
struct Harness {
    typealias Machine = TransferStateMachine<String, String>
    var machine: Machine
    var now: UInt64 = 1_000_000_000

    init(perKey: Int = 0, total: Int = 0, shardSize: Int = 256, idle: UInt64? = nil) {
        machine = Machine(limits: .init(perKey: perKey, total: total, shardSize: shardSize, idleTimeout: idle))
    }

    /// Submits `name` for host `key`; returns its identifier and the actions, rendered.
    mutating func submit(
        _ name: String, key: String = "a", deadline: UInt64? = nil, cancelled: Bool = false, spreadable: Bool = false,
        hop: Bool = false, multiplex: Bool = false, isolated: Bool = false, eventStream: Bool = false
    ) -> (TransferID?, [String]) {
        var actions: [Machine.Action] = []
        let id = machine.submit(
            name, key: key, deadline: deadline, cancelled: cancelled, spreadable: spreadable, mayMultiplex: multiplex,
            isolated: isolated, priority: hop ? .redirectHop : .normal, endsAtDrain: eventStream, now: now, into: &actions)
        return (id, actions.map(render))
    }

    mutating func cancel(_ id: TransferID?) -> [String] {
        var actions: [Machine.Action] = []
        if let id { machine.cancel(id, now: now, into: &actions) }
        return actions.map(render)
    }

    mutating func complete(_ id: TransferID?) -> (String?, [String]) {
        var actions: [Machine.Action] = []
        guard let id else { return (nil, []) }
        let payload = machine.complete(id, now: now, into: &actions)
        return (payload, actions.map(render))
    }

    mutating func startFailed(_ id: TransferID?) -> (String?, [String]) {
        var actions: [Machine.Action] = []
        guard let id else { return (nil, []) }
        let payload = machine.startFailed(id, now: now, into: &actions)
        return (payload, actions.map(render))
    }

    mutating func advance(to time: UInt64) -> [String] {
        now = time
        var actions: [Machine.Action] = []
        machine.timersFired(now: now, into: &actions)
        return actions.map(render)
    }

    mutating func idleCheck(_ id: TransferID?, lastActivity: UInt64) -> [String] {
        var actions: [Machine.Action] = []
        if let id { machine.idleCheck(id, lastActivity: lastActivity, now: now, into: &actions) }
        return actions.map(render)
    }

    /// The key's first response: `streams` is the client's cap, `attached` the transfers on its connections.
    mutating func learned(
        multiplexes: Bool, streams: Int = 1, open: Int = 1, attached: Int = 0, overflow: Int? = nil, for key: String = "a"
    ) -> [String] {
        var actions: [Machine.Action] = []
        machine.learnedProtocol(
            multiplexes: multiplexes, streamCap: streams, openConnections: open, attached: attached, overflow: overflow,
            for: key, now: now, into: &actions)
        return actions.map(render)
    }

    mutating func up(_ opener: TransferID?, for key: String = "a") -> [String] {
        var actions: [Machine.Action] = []
        guard let opener else { return [] }
        machine.connectionUp(for: key, opener: opener, now: now, into: &actions)
        return actions.map(render)
    }

    mutating func connections(_ open: Int, unexpected: Bool = false, attached: Int = 0, for key: String = "a") -> [String] {
        var actions: [Machine.Action] = []
        machine.connectionsChanged(
            openConnections: open, unexpected: unexpected, attached: attached, for: key, now: now, into: &actions)
        return actions.map(render)
    }

    mutating func probeJoined(for key: String = "a") -> [String] {
        var actions: [Machine.Action] = []
        machine.probeJoined(for: key, now: now, into: &actions)
        return actions.map(render)
    }

    mutating func probeOpened(attached: Int, open: Int, for key: String = "a") -> [String] {
        var actions: [Machine.Action] = []
        machine.probeOpened(attached: attached, openConnections: open, for: key, now: now, into: &actions)
        return actions.map(render)
    }

    mutating func probeEnded(for key: String = "a") -> [String] {
        var actions: [Machine.Action] = []
        machine.probeEnded(for: key, now: now, into: &actions)
        return actions.map(render)
    }

    mutating func ready(for key: String = "a") -> [String] {
        var actions: [Machine.Action] = []
        machine.connectionReady(for: key, now: now, into: &actions)
        return actions.map(render)
    }

    mutating func paused(_ id: TransferID?, _ direction: PauseDirection) {
        if let id { machine.paused(id, direction) }
    }

    mutating func resume(_ id: TransferID?, _ direction: PauseDirection) -> [String] {
        var actions: [Machine.Action] = []
        if let id { machine.resume(id, direction, now: now, into: &actions) }
        return actions.map(render)
    }

    mutating func headArrived(_ id: TransferID?) {
        if let id { machine.headArrived(id) }
    }

    /// Starts a graceful shutdown that ends in `nanoseconds`.
    mutating func drain(within nanoseconds: UInt64) -> [String] {
        var actions: [Machine.Action] = []
        machine.drain(until: now + nanoseconds, now: now, into: &actions)
        return actions.map(render)
    }

    mutating func shutdown() -> [String] {
        var actions: [Machine.Action] = []
        machine.shutdown(into: &actions)
        return actions.map(render)
    }

    /// Actions as `start x shard N timeout T`, `fail x reason`, `abort x reason`, `checkIdle`.
    func render(_ action: Machine.Action) -> String {
        switch action {
        case .start(_, let payload, let shard, let timeout, let connection):
            "start \(payload) shard \(shard)" + (timeout.map { " timeout \($0)" } ?? "")
                + (connection == .opens ? " opens" : connection == .probes ? " probes" : "")
        case .fail(let payload, let reason): "fail \(payload) \(reason)"
        case .abort(_, let payload, let reason): "abort \(payload) \(reason)"
        case .setPause(_, let receive, let send): "setPause receive \(receive) send \(send)"
        case .checkIdle: "checkIdle"
        case .drained: "drained"
        }
    }
}
