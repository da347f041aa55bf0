// Curlew — a session's event loop as other threads see it: an inbox and a wake-up.

import CCurlShims
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The part of a session's event loop that any thread may touch: it queues commands and wakes the
/// loop thread through an eventfd; nothing here waits for the loop.
///
/// Everything curl-related lives in ``LoopThread``, which is created on the loop thread, is not
/// `Sendable`, and never leaves it: the compiler, not a comment, keeps other threads out.
final class EventLoop: Sendable {
    /// What other threads ask of the loop.
    enum Command: Sendable {
        /// Run this transfer.
        case submit(Exchange)
        /// Its task was cancelled (or its reader gave up).
        case cancel(Exchange)
        /// Its reader or producer made room: resume that direction.
        case resume(Exchange, PauseDirection)
        /// Its handler returned once the whole response had arrived: the transfer runs on until its
        /// request body has ended, within the total timeout again.
        case awaitEnd(Exchange)
        /// Reply with the per-host figures.
        case hostStatistics(LoopReply<[HostStatistics]>)
        /// Read or change the cookie jar; reply with the cookies listed (empty for the other commands).
        case cookies(CookieCommand, LoopReply<[CurlSession.Cookie]>)
        /// Cancel everything and exit.
        case shutdown
        /// Shut down gracefully: refuse new work, let running transfers finish until `deadline`
        /// (monotonic nanoseconds; `grace` is the time that was given, for messages), then exit.
        case drain(deadline: UInt64, grace: Duration)
    }

    struct Inbox: Sendable {
        var commands: [Command] = []
        var wakePending = false
        var closed = false
        var shutdownWaiters: [UnsafeContinuation<Void, Never>] = []
    }

    let configuration: SessionConfiguration
    let counters = EngineCounters()
    /// What the session's streamed responses may hold above their floors together.
    let streamBudget: StreamBufferBudget
    let logger: Logger
    /// The session's metrics, for the loop's connection gauges; nil when it records none.
    let metrics: ClientMetrics?
    let inbox = Locked(Inbox())
    /// Written by other threads to wake the loop; closed by the loop thread under the inbox lock.
    let wakeFD: Int32
    let epollFD: Int32
    /// The loop thread, once started.
    private let threadHandle = Locked<pthread_t?>(nil)
    /// The loop thread's CPU clock, set once it has started.
    private let cpuClock = Atomic<Int32>(0)
    /// The loop thread's kernel thread id, once it runs (for tests and diagnostics).
    let kernelThreadID = Atomic<Int32>(0)
    /// Set when a graceful shutdown begins: wakes event-stream readers waiting to reconnect.
    let shutdownNotice = ShutdownNotice()
    /// Told each socket curl's open-socket callback returns, on the loop thread (tests: see
    /// `CurlSession+GracefulShutdown.swift`).
    let socketObserver = Locked<(@Sendable (Int32) -> Void)?>(nil)

    init(configuration: SessionConfiguration, logger: Logger, metrics: ClientMetrics? = nil) throws(TransportError) {
        self.metrics = metrics
        guard CurlGlobal.initialized else {
            throw TransportError(.curl, message: "curl_global_init failed")
        }
        self.configuration = configuration
        self.logger = logger
        streamBudget = StreamBufferBudget(
            bytes: configuration.maxStreamBufferSize > configuration.streamBufferSize ? configuration.streamBufferBudget : 0)
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        let wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard epoll >= 0, wake >= 0 else {
            if epoll >= 0 { close(epoll) }
            if wake >= 0 { close(wake) }
            throw TransportError(.curl, message: "cannot create the event loop's epoll/eventfd: errno \(errno)")
        }
        epollFD = epoll
        wakeFD = wake
    }

    /// Starts the loop thread. The thread holds the only extra reference to the loop until it exits.
    func start() throws(TransportError) {
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let loop = Unmanaged<EventLoop>.fromOpaque(argument).takeRetainedValue()
            LoopThread.run(loop)
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<EventLoop>.fromOpaque(context).release()
            close(epollFD)
            close(wakeFD)
            throw TransportError(.curl, message: "cannot start the event-loop thread: error \(result)")
        }
        var clock = clockid_t(0)
        pthread_getcpuclockid(thread, &clock)
        cpuClock.store(clock, ordering: .relaxed)
        threadHandle.withLock { $0 = thread }
    }

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

    /// Asks the loop to shut down gracefully (see ``CurlSession/shutdownGracefully(within:)``); resumes
    /// once it has exited and released everything but its thread. The deadline counts from now.
    func drain(within grace: Duration) async {
        let deadline = MonotonicClock.now().addingReportingOverflow(UInt64(max(0, grace.nanoseconds)))
        // Before the command: a reader woken by it must find the session shutting down.
        shutdownNotice.post()
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let accepted = inbox.withLock { inbox -> Bool in
                guard !inbox.closed else { return false }
                inbox.shutdownWaiters.append(continuation)
                return true
            }
            let command = Command.drain(deadline: deadline.overflow ? .max : deadline.partialValue, grace: grace)
            if accepted { enqueue(command) } else { continuation.resume() }
        }
    }

    /// Asks the loop to shut down without waiting.
    func requestShutdown() {
        enqueue(.shutdown)
    }

    /// Waits for the loop thread to exit; from the loop thread itself (the last reference dropped by
    /// code the loop resumed) it detaches instead, since joining itself would deadlock. A second caller
    /// returns once the first has joined.
    func join() {
        // The one lock held across a blocking call: only `start()` (which ran before) and `join()` take
        // it, so a second joiner waits for the first's join and nothing else can.
        threadHandle.withLock { handle in
            guard let thread = handle else { return }
            handle = nil
            if pthread_equal(pthread_self(), thread) != 0 {
                pthread_detach(thread)
            } else {
                pthread_join(thread, nil)
            }
        }
    }

    /// The per-host figures, from the loop thread; empty once the loop has stopped.
    func hostStatistics() async -> [HostStatistics] {
        await LoopReply.wait { reply in
            if !enqueue(.hostStatistics(reply)) { reply.send([]) }
        } ?? []
    }

    /// Runs a cookie-jar command on the loop thread; empty once the loop has stopped.
    func cookies(_ command: CookieCommand) async -> [CurlSession.Cookie] {
        await LoopReply.wait { reply in
            if !enqueue(.cookies(command, reply)) { reply.send([]) }
        } ?? []
    }

    /// CPU time the loop thread has used so far.
    var cpuTime: Duration {
        var spec = timespec()
        guard clock_gettime(cpuClock.load(ordering: .relaxed), &spec) == 0 else { return .zero }
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }
}
