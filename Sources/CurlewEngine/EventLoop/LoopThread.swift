// Curlew — the loop thread: epoll, the eventfd, curl's multi handles, and the actions of the state machine.

import CCurl
import Synchronization
import CCurlShims
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Everything the loop thread owns: one epoll set, libcurl's multi handles (shards), the easy-handle
/// pool, the contexts of running transfers, the ``TransferStateMachine`` and the ``ConnectionLedger``.
///
/// Created on the loop thread by ``run(_:)`` and never handed elsewhere; it is not `Sendable`, so no
/// other thread can reach it. Its code performs system and curl calls and the machine's actions; every
/// decision about a transfer's lifecycle is the machine's, and what curl's connection callbacks mean
/// for it the ledger's.
final class LoopThread {
    typealias Machine = TransferStateMachine<PoolKey, Exchange>
    typealias Ledger = ConnectionLedger<PoolKey>

    let loop: EventLoop
    let configuration: SessionConfiguration
    let counters: EngineCounters
    let logger: Logger
    let epollFD: Int32
    let wakeFD: Int32

    // The hot ones skip dynamic exclusivity checks: never accessed re-entrantly (curl's callbacks only
    // run inside calls that do not hold them).
    @exclusivity(unchecked) var machine: Machine
    @exclusivity(unchecked) var shards: [MultiShard] = []
    @exclusivity(unchecked) var registry: SocketRegistry
    /// Contexts of running transfers, indexed by their identifier's slot.
    @exclusivity(unchecked) var contexts: [TransferContext?] = []
    @exclusivity(unchecked) var pool: EasyHandlePool
    /// Actions the machine returned and the thread has yet to perform; reused between events.
    @exclusivity(unchecked) var actions: [Machine.Action] = []
    /// Transfers curl completed in this pass of the loop, with their outcomes: their callers are resumed
    /// together once the pass's bookkeeping is done, so the wake-ups reach the task pool back to back
    /// (one woken worker then takes several) instead of spread between handle resets. Reused.
    @exclusivity(unchecked) var completed: [(Exchange, TransferOutcome)] = []
    let defaults: HandleDefaults
    /// Whether transfers may spread over shards: only for an explicitly unlimited pool.
    let poolIsUnlimited: Bool
    /// The handle that loads, lists, changes and writes the cookie jar (with a jar only).
    @exclusivity(unchecked) var cookieJarHandle: EasyHandle?
    /// What curl's callbacks showed of each key's connections; it decides what the machine hears of them.
    @exclusivity(unchecked) var ledger = Ledger()
    /// What curl's callbacks learned in this pass of the loop, acted on once curl returns.
    @exclusivity(unchecked) var pass = PassQueue()
    /// Transfers whose progress counts wait for their coalescing window to end, with when it ends, and the
    /// soonest of those times (see `TransferContext.flushPendingProgress()`).
    @exclusivity(unchecked) var progressFlushes: [(id: TransferID, due: UInt64)] = []
    @exclusivity(unchecked) var nextProgressFlush: UInt64?
    /// The time the loop last woke (monotonic nanoseconds): what events and byte arrivals are stamped
    /// with. Bytes curl reads after a wake arrived before it, so activity is never dated late, and a
    /// timer compared with it never fires early.
    @exclusivity(unchecked) private(set) var now: UInt64 = MonotonicClock.now()
    /// Set by a shutdown command, or by the machine once a graceful shutdown has drained.
    @exclusivity(unchecked) var exiting = false
    /// The time a graceful shutdown gave, with its deadline: the soonest asked (for messages).
    var drainGrace: (deadline: UInt64, grace: Duration)?
    private var spareCommands: [EventLoop.Command] = []
    /// Connection metrics (open, active or idle, lifetimes, queue length); nil when none are recorded.
    @exclusivity(unchecked) var gauges: ConnectionGauges?

    private init(loop: EventLoop) {
        self.loop = loop
        configuration = loop.configuration
        counters = loop.counters
        logger = loop.logger
        epollFD = loop.epollFD
        wakeFD = loop.wakeFD
        machine = Machine(limits: Self.limits(loop.configuration))
        registry = SocketRegistry(epoll: loop.epollFD)
        pool = EasyHandlePool(capacity: loop.configuration.maxPooledHandles, counters: loop.counters)
        defaults = HandleDefaults(loop.configuration)
        poolIsUnlimited = loop.configuration.maxConnectionsPerHost <= 0 && loop.configuration.maxConnectionsTotal <= 0
        gauges = loop.metrics.map(ConnectionGauges.init)
    }

    /// The loop thread's body: sets up, runs until shutdown, tears down.
    static func run(_ loop: EventLoop) {
        curlew_set_thread_name("curlew-loop")
        loop.kernelThreadID.store(curlew_thread_id(), ordering: .relaxed)
        let thread = LoopThread(loop: loop)
        thread.defaults.bind(to: thread)
        guard thread.setUp() else {
            thread.tearDown(reason: "libcurl could not create a multi handle")
            return
        }
        loop.logger.debug(
            "event loop started",
            metadata: ["curl": "\(Libcurl.loaded.summary)", "system-trust": "\(SystemTrustStore.current)"])
        thread.runLoop()
        thread.tearDown(reason: "the session was shut down")
    }

    /// The limits the machine enforces, from the configuration.
    static func limits(_ configuration: SessionConfiguration) -> Machine.Limits {
        Machine.Limits(
            perKey: max(0, configuration.maxConnectionsPerHost), total: max(0, configuration.maxConnectionsTotal),
            shardSize: shardSize,
            idleTimeout: configuration.idleTimeout.map { UInt64(max(1, $0.nanoseconds)) })
    }

    /// Most transfers per multi handle before another shard is opened (see ``MultiShard``).
    static let shardSize = 256

    private func setUp() -> Bool {
        guard openShard() != nil else { return false }
        openCookieJar()
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeFD
        return epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0
    }

    /// Opens the next shard.
    @discardableResult
    func openShard() -> MultiShard? {
        guard let shard = MultiShard(index: shards.count, thread: self, configuration: configuration) else { return nil }
        shards.append(shard)
        return shard
    }

    private func runLoop() {
        let capacity = 1024
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while !exiting {
            let ready = epoll_wait(epollFD, events, Int32(capacity), timeoutMilliseconds())
            now = MonotonicClock.now()
            var wake = false
            if ready > 0 {
                for index in 0..<Int(ready) {
                    let fd = events[index].data.fd
                    if fd == wakeFD {
                        wake = true
                        continue
                    }
                    guard registry.isWanted(fd) else { continue }
                    let flags = events[index].events
                    if flags == EPOLLOUT.rawValue, defaults.quirks.http2UploadSpinsWithoutWindow {
                        writableOnly(fd)
                    } else {
                        registry.restoreWrites(fd)
                        socketAction(fd, flags: Self.curlFlags(flags))
                    }
                }
            }
            if !pass.transferEvents.isEmpty { tellMachineAboutTransfers() }
            if wake { drainInbox() }
            fireTimers()
            if !pass.uploadEnds.isEmpty { runAfterUploadEnds() }
            if !pass.earlyAnswers.isEmpty { watchEarlyAnswers() }
            if !pass.transferEvents.isEmpty { tellMachineAboutTransfers() }
            if !pass.connectionFindings.isEmpty { tellMachineAboutKeys() }
            collectFinished()
            if !pass.connectionFindings.isEmpty { tellMachineAboutKeys() }
            if !pass.responseWakes.isEmpty || !pass.trailerEnds.isEmpty { wakeStreams() }
        }
    }

    /// A socket reported writable and nothing else, on a libcurl that keeps asking to write to an HTTP/2
    /// connection whose upload stream has no flow-control window left and writes nothing
    /// (``CurlQuirks/http2UploadSpinsWithoutWindow``), which would spin the loop at full CPU for as long
    /// as a slow server takes to read. When curl wrote nothing, writability stops being watched on that
    /// socket until it is readable (the window update arrives as incoming data) or a short time has passed.
    private func writableOnly(_ fd: Int32) {
        let before = curlew_socket_written(fd)
        socketAction(fd, flags: CURL_CSELECT_OUT)
        guard before != UInt64.max, curlew_socket_written(fd) == before else { return }
        registry.holdWrites(fd, until: now &+ Self.stalledWriteRecheck)
    }

    /// How long a socket curl could not write to goes without write readiness, unless data arrives first.
    static let stalledWriteRecheck: UInt64 = 20_000_000

    /// Resumes the consumers and producers this pass made room or data for.
    private func wakeStreams() {
        if !pass.trailerEnds.isEmpty {
            for context in pass.trailerEnds where context.exchange.endBody(.complete, trailers: context.head.makeTrailers()) {
                pass.responseWakes.append(context.exchange)
            }
            pass.trailerEnds.removeAll(keepingCapacity: true)
        }
        if !pass.responseWakes.isEmpty {
            for stream in pass.responseWakes { stream.wake() }
            pass.responseWakes.removeAll(keepingCapacity: true)
        }
    }

    /// Tells the machine what callbacks learned about transfers.
    func tellMachineAboutTransfers() {
        let events = pass.transferEvents
        pass.transferEvents.removeAll(keepingCapacity: true)
        for event in events {
            switch event {
            case .paused(let id, let direction):
                machine.paused(id, direction)
                if direction == .receive { holdReads(of: id) }
            case .headArrived(let id): machine.headArrived(id)
            }
        }
    }

    private func socketAction(_ fd: Int32, flags: Int32) {
        let shard = registry.shard(of: fd)
        guard shard < shards.count else { return }
        shards[shard].action(fd, flags: flags)
    }

    /// curl's timers, then the machine's, and sockets whose writes were held back.
    private func fireTimers() {
        if let due = registry.nextWriteRecheck, now >= due { registry.restoreDueWrites(now: now) }
        for shard in shards {
            guard let deadline = shard.deadline, now >= deadline else { continue }
            shard.deadline = nil
            shard.action(CURL_SOCKET_TIMEOUT, flags: 0)
        }
        if let deadline = machine.nextDeadline, now >= deadline {
            machine.timersFired(now: now, into: &actions)
            performActions()
        }
        if let due = nextProgressFlush, now >= due { flushProgress() }
    }

    private static func curlFlags(_ events: UInt32) -> Int32 {
        var flags: Int32 = 0
        if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0 { flags |= CURL_CSELECT_IN }
        if events & EPOLLOUT.rawValue != 0 { flags |= CURL_CSELECT_OUT }
        if events & EPOLLERR.rawValue != 0 { flags |= CURL_CSELECT_ERR }
        return flags
    }

    /// Milliseconds until the soonest of curl's and the machine's timers, rounded up so no timer is
    /// served early; -1 to wait for I/O only.
    private func timeoutMilliseconds() -> Int32 {
        var earliest = machine.nextDeadline
        if let due = registry.nextWriteRecheck, due < (earliest ?? .max) { earliest = due }
        if let due = nextProgressFlush, due < (earliest ?? .max) { earliest = due }
        for shard in shards {
            if let deadline = shard.deadline, deadline < (earliest ?? .max) { earliest = deadline }
        }
        guard let deadline = earliest else { return -1 }
        let now = MonotonicClock.now()
        guard deadline > now else { return 0 }
        return Int32(clamping: (deadline - now + 999_999) / 1_000_000)
    }

    private func drainInbox() {
        var value: UInt64 = 0
        _ = read(wakeFD, &value, 8)  // read before taking the commands, so no wake-up is lost
        var commands = spareCommands
        loop.inbox.withLock { inbox in
            swap(&commands, &inbox.commands)
            inbox.wakePending = false
        }
        for command in commands {
            switch command {
            case .submit(let exchange): submit(exchange)
            case .cancel(let exchange): cancel(exchange)
            case .resume(let exchange, let direction): resume(exchange, direction)
            case .awaitEnd(let exchange): awaitEnd(exchange)
            case .hostStatistics(let reply): reply.send(hostStatistics())
            case .cookies(let command, let reply): reply.send(perform(command))
            case .shutdown: exiting = true
            case .drain(let deadline, let grace): drain(until: deadline, grace: grace)
            }
        }
        while !commands.isEmpty { commands.removeLast() }  // cheaper than removeAll(keepingCapacity:) for a few
        spareCommands = commands
    }

    /// Tells the machine what the ledger found in curl's callbacks about keys, then performs what it decides.
    private func tellMachineAboutKeys() {
        let findings = pass.connectionFindings
        pass.connectionFindings.removeAll()
        ledger.tell(
            findings, to: &machine, streamCap: max(1, configuration.maxConcurrentStreams), now: now, into: &actions)
        performActions()
    }

    // MARK: Statistics

    private func hostStatistics() -> [HostStatistics] {
        var hosts: [PoolKey: HostStatistics] = [:]
        func entry(_ key: PoolKey) -> HostStatistics {
            hosts[key] ?? HostStatistics(host: key.description, queuedRequests: 0, runningRequests: 0, openConnections: 0, peakOpenConnections: 0)
        }
        for (key, queued, running) in machine.keyCounts {
            var stats = entry(key)
            stats.queuedRequests = queued
            stats.runningRequests = running
            hosts[key] = stats
        }
        for (key, open, peak) in ledger.socketCounts {
            var stats = entry(key)
            stats.openConnections = open
            stats.peakOpenConnections = peak
            hosts[key] = stats
        }
        return hosts.values.sorted { $0.host < $1.host }
    }

    // MARK: Shutdown

    private func tearDown(reason: String) {
        machine.shutdown(into: &actions)
        performActions(shutdownReason: reason)
        let (leftovers, waiters) = loop.inbox.withLock { inbox -> ([EventLoop.Command], [UnsafeContinuation<Void, Never>]) in
            inbox.closed = true
            defer {
                inbox.commands = []
                inbox.shutdownWaiters = []
            }
            return (inbox.commands, inbox.shutdownWaiters)
        }
        for command in leftovers {
            switch command {
            case .submit(let exchange): exchange.finish(.failure(exchange.request.error(.sessionShutDown, reason)))
            case .hostStatistics(let reply): reply.send([])
            case .cookies(_, let reply): reply.send([])
            case .cancel, .resume, .awaitEnd, .shutdown, .drain: continue
            }
        }
        pool.drain()
        closeCookieJar()
        for shard in shards { shard.cleanup() }  // closes idle connections through closeSocket
        defaults.release()
        shards = []
        loop.inbox.withLock { _ in
            close(wakeFD)
            close(epollFD)
        }
        logger.debug("event loop stopped")
        for waiter in waiters { waiter.resume() }
    }
}
