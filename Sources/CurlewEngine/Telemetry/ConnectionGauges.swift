// Curlew — the connection metrics the loop keeps: open connections per server, active or idle, how long
// each stayed open, and the admission queue's length.

import CoreMetrics

/// The loop's connection metrics. Confined to the loop thread.
///
/// A connection counts as active while a transfer of its server runs and as idle otherwise: per server,
/// `active` is the smaller of its open connections and its running transfers (exact for HTTP/1.1, where a
/// transfer holds a connection; for HTTP/2 several transfers may share one, so the split leans to active).
struct ConnectionGauges {
    private let metrics: ClientMetrics
    private var servers: [PoolKey: Server] = [:]
    /// The server of the last change: most changes in a row are one server's.
    private var last: (key: PoolKey, server: Server)?
    /// When each open socket opened, and whose it is.
    private var opened: [Int32: (at: UInt64, key: PoolKey)] = [:]
    private var lastQueued = -1

    /// One server's counts. A class, changed in place wherever it is found.
    private final class Server {
        var open = 0
        var running = 0
        let metrics: ServerMetrics

        init(_ metrics: ServerMetrics) { self.metrics = metrics }
    }

    init(_ metrics: ClientMetrics) {
        self.metrics = metrics
    }

    mutating func socketOpened(_ fd: Int32, key: PoolKey, now: UInt64) {
        opened[fd] = (now, key)
        let server = server(key)
        server.open += 1
        publish(server)
    }

    mutating func socketClosed(_ fd: Int32, now: UInt64) {
        guard let (at, key) = opened.removeValue(forKey: fd) else { return }
        let server = server(key)
        server.open = max(0, server.open - 1)
        publish(server)
        server.metrics.connectionDuration.recordNanoseconds(Int64(clamping: now &- min(now, at)))
        forgetIfIdle(key, server)
    }

    mutating func transferStarted(_ key: PoolKey) {
        let server = server(key)
        server.running += 1
        publish(server)
    }

    mutating func transferEnded(_ key: PoolKey) {
        let server = server(key)
        server.running = max(0, server.running - 1)
        publish(server)
        forgetIfIdle(key, server)
    }

    /// The admission queue's length, set when it changed.
    mutating func queued(_ count: Int) {
        guard count != lastQueued else { return }
        lastQueued = count
        metrics.queueLength.set(Int64(count))
    }

    private mutating func server(_ key: PoolKey) -> Server {
        if let last, last.key === key { return last.server }
        let server = servers[key] ?? Server(metrics.server(key))
        servers[key] = server
        last = (key, server)
        return server
    }

    private func publish(_ server: Server) {
        let active = min(server.open, server.running)
        server.metrics.setConnections(active: active, idle: server.open - active)
    }

    /// A server with nothing open and nothing running is forgotten (its handlers stay in the metrics).
    private mutating func forgetIfIdle(_ key: PoolKey, _ server: Server) {
        guard server.open == 0, server.running == 0 else { return }
        servers[key] = nil
        if last?.server === server { last = nil }
    }
}
