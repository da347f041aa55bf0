// Curlew — which sockets the loop's epoll set watches, with lazy removal.

import CCurlShims

#if canImport(Glibc)
import Glibc
#endif

/// The epoll registrations for curl's sockets.
///
/// libcurl asks to stop watching a socket at the end of every transfer and to watch it again when the
/// next transfer reuses the connection. Removing lazily saves two `epoll_ctl` calls per request: a
/// socket curl no longer wants stays registered until it next reports an event (then it is removed)
/// or curl wants it again with the same events (then nothing is done). Correctness across fd reuse
/// rests on curl opening and closing sockets only through ``LoopThread/openSocket(for:family:type:protocol:)``
/// and ``LoopThread/closeSocket(_:)``, which record and forget the entry. Each socket also remembers the
/// pool key it was opened for, so open connections are counted per host.
struct SocketRegistry {
    private struct Entry {
        var registered: UInt32 = 0
        var wanted: UInt32 = 0
        var shard: Int32 = 0
        var key: PoolKey?
        /// Writability is not watched until then (see ``holdWrites(_:until:)``); 0: not held.
        var writesHeldUntil: UInt64 = 0
        /// Readability is not watched (see ``holdReads(_:)``).
        var readsHeld = false
    }

    private var entries: [Entry] = []
    /// Sockets whose writes are held back.
    private var held: [Int32] = []
    /// The soonest time a held socket's writability is watched again.
    private(set) var nextWriteRecheck: UInt64?
    let epoll: Int32
    private(set) var controlCalls = 0
    private(set) var watched = 0

    init(epoll: Int32) {
        self.epoll = epoll
    }

    /// curl (the multi handle of `shard`) wants `events` (0 to stop) on `fd`.
    mutating func want(_ fd: Int32, events: UInt32, shard: Int) {
        guard fd >= 0 else { return }
        let index = Int(fd)
        if index >= entries.count { entries.append(contentsOf: repeatElement(Entry(), count: index + 1 - entries.count + 64)) }
        entries[index].wanted = events
        entries[index].shard = Int32(shard)
        if entries[index].writesHeldUntil != 0 { release(fd) }
        if entries[index].readsHeld {
            register(fd, events & ~EPOLLIN.rawValue)
        } else if events != 0 {
            register(fd, events)
        }
    }

    /// A socket curl just opened for a connection to `key`.
    mutating func opened(_ fd: Int32, key: PoolKey) {
        guard fd >= 0 else { return }
        let index = Int(fd)
        if index >= entries.count { entries.append(contentsOf: repeatElement(Entry(), count: index + 1 - entries.count + 64)) }
        entries[index] = Entry(key: key)
    }

    /// Whether `fd` is registered as a socket curl opened (and has not closed through the callback).
    func isOpened(_ fd: Int32) -> Bool {
        let index = Int(fd)
        return index >= 0 && index < entries.count && entries[index].key != nil
    }

    /// Whether curl currently wants events on `fd`. An unwanted registered socket is removed here.
    mutating func isWanted(_ fd: Int32) -> Bool {
        let index = Int(fd)
        guard index >= 0, index < entries.count else { return false }
        if entries[index].wanted != 0 { return true }
        if entries[index].registered != 0 { unwatch(fd) }
        return false
    }

    /// The shard whose multi handle owns `fd`.
    func shard(of fd: Int32) -> Int {
        let index = Int(fd)
        guard index >= 0, index < entries.count else { return 0 }
        return Int(entries[index].shard)
    }

    /// Stops watching `fd` now; called before curl closes it. Returns the pool key it was opened for.
    @discardableResult
    mutating func forget(_ fd: Int32) -> PoolKey? {
        let index = Int(fd)
        guard index >= 0, index < entries.count else { return nil }
        if entries[index].registered != 0 {
            _ = control(Int32(EPOLL_CTL_DEL), fd, 0)
            watched -= 1
        }
        let key = entries[index].key
        if entries[index].writesHeldUntil != 0 { release(fd) }
        entries[index] = Entry()
        return key
    }

    // MARK: Held reads

    /// Stops watching `fd` for reading, whatever curl asks, until ``releaseReads(_:)``: the socket of a
    /// paused HTTP/1.x transfer, which a libcurl with ``CurlQuirks/pausedTransferSocketStaysReadable``
    /// would read into its pause buffer. Writes curl wants are still watched; with none the socket leaves
    /// the epoll set (level-triggered readiness would otherwise wake the loop for ever).
    mutating func holdReads(_ fd: Int32) {
        let index = Int(fd)
        guard index >= 0, index < entries.count, !entries[index].readsHeld else { return }
        entries[index].readsHeld = true
        register(fd, entries[index].wanted & ~EPOLLIN.rawValue)
    }

    /// Watches `fd` as curl wants again.
    mutating func releaseReads(_ fd: Int32) {
        let index = Int(fd)
        guard index >= 0, index < entries.count, entries[index].readsHeld else { return }
        entries[index].readsHeld = false
        if entries[index].wanted != 0 { register(fd, entries[index].wanted) }
    }

    /// Makes `fd`'s registration exactly `events`; 0 removes it at once (unlike the lazy removal of a
    /// socket curl stops wanting, which would keep a held socket's readability waking the loop).
    private mutating func register(_ fd: Int32, _ events: UInt32) {
        let index = Int(fd)
        guard entries[index].registered != events else { return }
        if events == 0 {
            unwatch(fd)
            return
        }
        let operation = entries[index].registered == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        if control(Int32(operation), fd, events) {
            if entries[index].registered == 0 { watched += 1 }
            entries[index].registered = events
        }
    }

    // MARK: Held writes

    /// Stops watching `fd` for writability until `deadline`, or until it reports another event or curl
    /// changes what it wants: curl asked to write and wrote nothing.
    mutating func holdWrites(_ fd: Int32, until deadline: UInt64) {
        let index = Int(fd)
        // Only a socket also watched for reading: its window update arrives as data, and a registration
        // never drops to no events at all.
        guard index >= 0, index < entries.count, entries[index].registered & EPOLLOUT.rawValue != 0,
            entries[index].registered & EPOLLIN.rawValue != 0, entries[index].writesHeldUntil == 0
        else { return }
        let events = entries[index].registered & ~EPOLLOUT.rawValue
        guard control(Int32(EPOLL_CTL_MOD), fd, events) else { return }
        entries[index].registered = events
        entries[index].writesHeldUntil = deadline
        held.append(fd)
        if deadline < (nextWriteRecheck ?? .max) { nextWriteRecheck = deadline }
    }

    /// Watches a held socket's writability again (it reported an event).
    @inline(__always)
    mutating func restoreWrites(_ fd: Int32) {
        let index = Int(fd)
        guard index >= 0, index < entries.count, entries[index].writesHeldUntil != 0 else { return }
        restore(fd)
    }

    /// Watches again every held socket whose time has come.
    mutating func restoreDueWrites(now: UInt64) {
        for fd in held where entries[Int(fd)].writesHeldUntil != 0 && entries[Int(fd)].writesHeldUntil <= now {
            restore(fd)
        }
    }

    private mutating func restore(_ fd: Int32) {
        let index = Int(fd)
        let wanted = entries[index].wanted
        release(fd)
        if wanted != 0 { register(fd, entries[index].readsHeld ? wanted & ~EPOLLIN.rawValue : wanted) }
    }

    /// Forgets that `fd`'s writes are held.
    private mutating func release(_ fd: Int32) {
        entries[Int(fd)].writesHeldUntil = 0
        held.removeAll { $0 == fd }
        nextWriteRecheck = held.map { entries[Int($0)].writesHeldUntil }.min()
    }

    /// Stops watching a socket curl no longer wants, keeping what it was opened for.
    private mutating func unwatch(_ fd: Int32) {
        _ = control(Int32(EPOLL_CTL_DEL), fd, 0)
        watched -= 1
        entries[Int(fd)].registered = 0
    }

    private mutating func control(_ operation: Int32, _ fd: Int32, _ events: UInt32) -> Bool {
        controlCalls += 1
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        return epoll_ctl(epoll, operation, fd, &event) == 0
    }
}
