// Curlew — the dedicated thread that owns a session's libcurl multi handle.

import CCurl
import CCurlShims
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One thread, one `CURLM`, one epoll set: every curl call of a session happens here.
///
/// Other threads only append commands to the inbox and wake the loop through an eventfd in its epoll
/// set; nothing waits for the loop. The loop drives libcurl with `curl_multi_socket_action`, whose cost
/// grows with the sockets that are ready rather than with every transfer in flight.
final class EventLoop: @unchecked Sendable {
    // @unchecked: the only state touched from other threads is `inbox` (behind its lock), the
    // immutable `wakeFD`, `configuration`, `counters` (atomics) and `cpuClock` (written once before the
    // thread starts). Everything else is confined to the loop thread, which is the only caller of
    // `run()`, of the curl callbacks and of every method below the "Loop thread" mark.

    enum Command {
        case submit(Transfer)
        case cancel(Transfer)
        case shutdown
    }

    private struct Inbox {
        var commands: [Command] = []
        var wakePending = false
        var closed = false
        var shutdownWaiters: [UnsafeContinuation<Void, Never>] = []
    }

    let configuration: SessionConfiguration
    let counters = EngineCounters()
    let logger: Logger
    private let inbox = Locked(Inbox())
    private let wakeFD: Int32
    private(set) var thread = pthread_t()
    private var cpuClock = clockid_t(0)
    /// The loop thread's kernel thread id, once it runs (for tests and diagnostics).
    let kernelThreadID = Atomic<Int32>(0)

    // Loop thread only. The hot ones skip dynamic exclusivity checks: confined to one thread and
    // never accessed re-entrantly (curl's callbacks only run inside calls that do not hold them).
    @exclusivity(unchecked) private var shards: [MultiShard] = []
    /// Shards are used only without connection limits, which libcurl enforces per multi handle.
    private var shardingAllowed: Bool { configuration.maxConnectionsPerHost == 0 && configuration.maxConnectionsTotal == 0 }
    /// Most transfers per multi handle before another shard is opened.
    static let shardSize = 256
    private let epollFD: Int32
    @exclusivity(unchecked) private var registry: SocketRegistry
    /// Transfers curl is running; each context knows its index, so removal is a swap with the last.
    @exclusivity(unchecked) private var active: [TransferContext] = []
    @exclusivity(unchecked) private var pool: EasyHandlePool
    private var defaults: HandleDefaults?
    private var exiting = false
    private var spareCommands: [Command] = []

    init(configuration: SessionConfiguration, logger: Logger) throws(TransportError) {
        guard CurlGlobal.initialized else {
            throw TransportError(.curl, message: "curl_global_init failed")
        }
        self.configuration = configuration
        self.logger = logger
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        let wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard epoll >= 0, wake >= 0 else {
            if epoll >= 0 { close(epoll) }
            if wake >= 0 { close(wake) }
            throw TransportError(.curl, message: "cannot create the event loop's epoll/eventfd: errno \(errno)")
        }
        epollFD = epoll
        wakeFD = wake
        registry = SocketRegistry(epoll: epoll)
        pool = EasyHandlePool(capacity: configuration.maxPooledHandles, counters: counters)
    }

    /// Starts the loop thread. The thread holds the only extra reference to the loop until it exits.
    func start() throws(TransportError) {
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let loop = Unmanaged<EventLoop>.fromOpaque(argument).takeRetainedValue()
            loop.run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<EventLoop>.fromOpaque(context).release()
            close(epollFD)
            close(wakeFD)
            throw TransportError(.curl, message: "cannot start the event-loop thread: error \(result)")
        }
        pthread_getcpuclockid(thread, &cpuClock)
    }

    // MARK: Any thread

    /// Queues a command and wakes the loop. Returns false when the loop has shut down.
    @discardableResult
    func enqueue(_ command: Command) -> Bool {
        inbox.withLock { inbox in
            guard !inbox.closed else { return false }
            inbox.commands.append(command)
            if !inbox.wakePending {
                inbox.wakePending = true
                // Written under the lock so the loop cannot close the eventfd in between.
                var one: UInt64 = 1
                _ = write(wakeFD, &one, 8)
            }
            return true
        }
    }

    /// Asks the loop to cancel everything and exit; resumes once it has cleaned up.
    func shutdown() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let accepted = inbox.withLock { inbox -> Bool in
                guard !inbox.closed else { return false }
                inbox.shutdownWaiters.append(continuation)
                return true
            }
            if accepted { enqueue(.shutdown) } else { continuation.resume() }
        }
    }

    /// Asks the loop to shut down without waiting.
    func requestShutdown() {
        enqueue(.shutdown)
    }

    /// CPU time the loop thread has used so far.
    var cpuTime: Duration {
        var spec = timespec()
        guard clock_gettime(cpuClock, &spec) == 0 else { return .zero }
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }

    // MARK: Loop thread

    private func run() {
        curlew_set_thread_name("curlew-loop")
        kernelThreadID.store(curlew_thread_id(), ordering: .relaxed)
        guard setUp() else {
            tearDown(reason: "libcurl could not create a multi handle")
            return
        }
        logger.debug("event loop started", metadata: ["curl": "\(CurlGlobal.versionDescription)"])
        let capacity = 1024
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while !exiting {
            let ready = epoll_wait(epollFD, events, Int32(capacity), timeoutMilliseconds())
            var wake = false
            if ready > 0 {
                for index in 0..<Int(ready) {
                    let fd = events[index].data.fd
                    if fd == wakeFD {
                        wake = true
                        continue
                    }
                    guard registry.isWanted(fd) else { continue }
                    socketAction(fd, flags: Self.curlFlags(events[index].events))
                }
            }
            if wake { drainInbox() }
            fireTimers()
            collectFinished()
        }
        tearDown(reason: "the session was shut down")
    }

    private func setUp() -> Bool {
        guard let first = MultiShard(index: 0, loop: self, configuration: configuration) else { return false }
        shards = [first]
        defaults = HandleDefaults(configuration, loop: Unmanaged.passUnretained(self).toOpaque())
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeFD
        return epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0
    }

    private func socketAction(_ fd: Int32, flags: Int32) {
        let shard = registry.shard(of: fd)
        guard shard < shards.count else { return }
        shards[shard].action(fd, flags: flags)
    }

    private func fireTimers() {
        var now: UInt64 = 0
        for shard in shards {
            guard let deadline = shard.deadline else { continue }
            if now == 0 { now = Self.now() }
            guard now >= deadline else { continue }
            shard.deadline = nil
            shard.action(CURL_SOCKET_TIMEOUT, flags: 0)
        }
    }

    private static func curlFlags(_ events: UInt32) -> Int32 {
        var flags: Int32 = 0
        if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0 { flags |= CURL_CSELECT_IN }
        if events & EPOLLOUT.rawValue != 0 { flags |= CURL_CSELECT_OUT }
        if events & EPOLLERR.rawValue != 0 { flags |= CURL_CSELECT_ERR }
        return flags
    }

    private func timeoutMilliseconds() -> Int32 {
        var earliest: UInt64?
        for shard in shards {
            if let deadline = shard.deadline, deadline < (earliest ?? .max) { earliest = deadline }
        }
        guard let deadline = earliest else { return -1 }
        let now = Self.now()
        guard deadline > now else { return 0 }
        return Int32(clamping: (deadline - now + 999_999) / 1_000_000)
    }

    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    private func drainInbox() {
        var value: UInt64 = 0
        _ = read(wakeFD, &value, 8)  // read before taking the commands, so no wake-up is lost
        var commands = spareCommands
        inbox.withLock { inbox in
            swap(&commands, &inbox.commands)
            inbox.wakePending = false
        }
        for command in commands {
            switch command {
            case .submit(let transfer): startTransfer(transfer)
            case .cancel(let transfer): cancelTransfer(transfer)
            case .shutdown: exiting = true
            }
        }
        commands.removeAll(keepingCapacity: true)
        spareCommands = commands
    }

    // MARK: Loop-thread accessors for the transfer bookkeeping in EventLoop+Transfers.swift

    /// The shard a new transfer joins: the first with room, or a new one when all are full.
    func shardForNewTransfer() -> MultiShard? {
        guard shardingAllowed else { return shards.first }
        if let shard = shards.first(where: { $0.active < Self.shardSize }) { return shard }
        guard let shard = MultiShard(index: shards.count, loop: self, configuration: configuration) else {
            return shards.min(by: { $0.active < $1.active })
        }
        shards.append(shard)
        return shard
    }
    var allShards: [MultiShard] { shards }
    var handleDefaults: HandleDefaults? { defaults }
    func takeHandle(_ defaults: HandleDefaults) -> EasyHandle? { pool.take(defaults) }
    func returnHandle(_ handle: EasyHandle) {
        guard let defaults else { return handle.destroy() }
        pool.give(handle, defaults)
    }
    func insertActive(_ context: TransferContext) {
        context.activeIndex = active.count
        active.append(context)
        context.transfer.context = context
        counters.activeTransfers.store(active.count, ordering: .relaxed)
    }
    func removeActive(_ context: TransferContext) {
        let index = context.activeIndex
        guard index >= 0, index < active.count, active[index] === context else { return }
        let last = active.removeLast()
        if last !== context {
            active[index] = last
            last.activeIndex = index
        }
        context.activeIndex = -1
        context.transfer.context = nil  // breaks the transfer <-> context cycle
        counters.activeTransfers.store(active.count, ordering: .relaxed)
    }
    func activeContext(for transfer: Transfer) -> TransferContext? { transfer.context }

    // MARK: Curl callbacks (loop thread, inside curl calls)

    func watch(socket: curl_socket_t, what: Int32, shard: Int) {
        switch what {
        case CURL_POLL_IN: registry.want(socket, events: EPOLLIN.rawValue, shard: shard)
        case CURL_POLL_OUT: registry.want(socket, events: EPOLLOUT.rawValue, shard: shard)
        case CURL_POLL_INOUT: registry.want(socket, events: EPOLLIN.rawValue | EPOLLOUT.rawValue, shard: shard)
        default: registry.want(socket, events: 0, shard: shard)
        }
        counters.socketsWatched.store(registry.watched, ordering: .relaxed)
        counters.epollControlCalls.store(registry.controlCalls, ordering: .relaxed)
    }


    /// curl closes every socket through here, so the epoll set never watches a closed (or reused) fd.
    func closeSocket(_ socket: curl_socket_t) -> Int32 {
        registry.forget(socket)
        counters.socketsWatched.store(registry.watched, ordering: .relaxed)
        counters.epollControlCalls.store(registry.controlCalls, ordering: .relaxed)
        return close(socket)
    }

    // MARK: Shutdown (loop thread)

    private func tearDown(reason: String) {
        for context in active {
            removeAndFinish(context, .failure(context.transfer.request.error(.sessionShutDown, reason)))
        }
        let (leftovers, waiters) = inbox.withLock { inbox -> ([Command], [UnsafeContinuation<Void, Never>]) in
            inbox.closed = true
            defer {
                inbox.commands = []
                inbox.shutdownWaiters = []
            }
            return (inbox.commands, inbox.shutdownWaiters)
        }
        for case .submit(let transfer) in leftovers {
            transfer.finish(.failure(transfer.request.error(.sessionShutDown, reason)))
        }
        pool.drain()
        for shard in shards { shard.cleanup() }  // closes idle connections through closeSocket
        defaults?.releaseSharedHeaderList()
        shards = []
        inbox.withLock { _ in
            close(wakeFD)
            close(epollFD)
        }
        logger.debug("event loop stopped")
        for waiter in waiters { waiter.resume() }
    }
}
