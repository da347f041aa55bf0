// Curlew — what curl's callbacks tell the loop about connections: response heads, sockets to watch,
// sockets opened and closed (loop thread, inside curl calls).

import CCurl
import CCurlShims
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension LoopThread {
    /// A response head arrived (header callback): the ledger decides what it tells (an opener's
    /// connection in use, the key's protocol if not known yet).
    func noteResponseHead(of context: TransferContext, http2: Bool) {
        let key = context.exchange.request.poolKey
        ledger.headArrived(
            key, of: &context.connection, http2: http2, mayMultiplex: defaults.mayMultiplex(key),
            into: &pass.connectionFindings)
    }

    /// curl put a transfer of a key that may multiplex on a connection (its pre-request callback, before
    /// the request is sent on a new or reused connection): the ledger counts it.
    func noteAttached(_ context: TransferContext) {
        ledger.transferAttached(context.exchange.request.poolKey, &context.connection, into: &pass.connectionFindings)
    }

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

    /// curl opens every socket through here, for a transfer's new connection: counted per pool key by the
    /// ledger.
    func openSocket(for context: TransferContext, family: Int32, type: Int32, protocol: Int32) -> curl_socket_t {
        let fd = socket(family, type | Int32(SOCK_CLOEXEC.rawValue), `protocol`)
        guard fd >= 0 else { return CURL_SOCKET_BAD }
        // A number the registry still holds was closed without the close callback: libcurl 7.88 closes
        // some sockets of cancelled transfers so (the soak counted more connections than sockets). It is
        // counted closed now that the system hands the number out again.
        if registry.isOpened(fd) { forgetClosed(fd) }
        let key = context.exchange.request.poolKey
        ledger.socketOpened(
            key, by: &context.connection, mayMultiplex: defaults.mayMultiplex(key), into: &pass.connectionFindings)
        // Connecting means libcurl has loaded this transfer's host overrides into the shard's DNS cache.
        if defaults.resolveList != nil { context.shard.hasHostOverrides = true }
        registry.opened(fd, key: key)
        gauges?.socketOpened(fd, key: key, now: now)
        counters.socketOpened()
        return fd
    }

    /// curl closes every socket through here, so the epoll set never watches a closed (or reused) fd.
    func closeSocket(_ socket: curl_socket_t) -> Int32 {
        forgetClosed(socket)
        return close(socket)
    }

    /// Counts a socket curl opened as closed: its key's connections, the gauges, the watched set.
    private func forgetClosed(_ socket: curl_socket_t) {
        if let key = registry.forget(socket) {
            gauges?.socketClosed(socket, now: MonotonicClock.now())
            ledger.socketClosed(key, into: &pass.connectionFindings)
            counters.socketClosed()
        }
        counters.socketsWatched.store(registry.watched, ordering: .relaxed)
        counters.epollControlCalls.store(registry.controlCalls, ordering: .relaxed)
    }
}
