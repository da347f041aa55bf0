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
    }

    private var entries: [Entry] = []
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
        guard events != 0, entries[index].registered != events else { return }
        let operation = entries[index].registered == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        if control(Int32(operation), fd, events) {
            if entries[index].registered == 0 { watched += 1 }
            entries[index].registered = events
        }
    }

    /// A socket curl just opened for a connection to `key`.
    mutating func opened(_ fd: Int32, key: PoolKey) {
        guard fd >= 0 else { return }
        let index = Int(fd)
        if index >= entries.count { entries.append(contentsOf: repeatElement(Entry(), count: index + 1 - entries.count + 64)) }
        entries[index] = Entry(key: key)
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
        entries[index] = Entry()
        return key
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
