// Curlew — what curl's callbacks tell the loop about connections: response heads, sockets to watch,
// sockets opened and closed (loop thread, inside curl calls).

import CCurl
import CCurlShims
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension LoopThread {
    /// A response head arrived (header callback): the key's protocol, if not known yet, and the
    /// connection a transfer was admitted to open is in use.
    func noteResponseHead(of context: TransferContext, http2: Bool) {
        let key = context.exchange.request.poolKey
        if context.opensConnection {
            context.opensConnection = false
            pass.keyEvents.append(.connectionReady(key, opener: context.id))
        }
        guard defaults.mayMultiplex(key), !knownKeys.contains(key) else { return }
        knownKeys.insert(key)
        if http2 { multiplexedKeys.insert(key) }
        pass.keyEvents.append(.protocolLearned(key, multiplexes: http2))
    }

    /// curl put a transfer of a key that may multiplex on a connection (its pre-request callback, before
    /// the request is sent on a new or reused connection): counted, and a probe that did not need a
    /// connection of its own joined.
    func noteAttached(_ context: TransferContext) {
        guard !context.attached else { return }
        context.attached = true
        let key = context.exchange.request.poolKey
        attachedTransfers[key, default: 0] += 1
        if context.opensConnection, context.openedSocket { pass.keyEvents.append(.connectionUp(key, opener: context.id)) }
        if context.probes {
            context.probes = false
            pass.keyEvents.append(.probeJoined(key))
        }
    }

    /// A transfer counted by `noteAttached` ended.
    func detach(_ context: TransferContext) {
        context.attached = false
        let key = context.exchange.request.poolKey
        let left = (attachedTransfers[key] ?? 1) - 1
        attachedTransfers[key] = left > 0 ? left : nil
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

    /// curl opens every socket through here, for a transfer's new connection: counted per pool key.
    func openSocket(for context: TransferContext, family: Int32, type: Int32, protocol: Int32) -> curl_socket_t {
        let fd = socket(family, type | Int32(SOCK_CLOEXEC.rawValue), `protocol`)
        guard fd >= 0 else { return CURL_SOCKET_BAD }
        let key = context.exchange.request.poolKey
        context.openedSocket = true
        if context.probes {
            // The connections were full: the probe opens the next one.
            context.probes = false
            context.opensConnection = true
            pass.keyEvents.append(.probeOpened(key, attached: attachedTransfers[key] ?? 0))
        } else if multiplexedKeys.contains(key) {
            pass.keyEvents.append(.connectionsChanged(key, unexpected: !context.opensConnection))
        } else if let open = openSockets[key], open >= 1, !knownKeys.contains(key), firstOverflow[key] == nil,
            defaults.mayMultiplex(key)
        {
            firstOverflow[key] = attachedTransfers[key] ?? 0
        }
        // Connecting means libcurl has loaded this transfer's host overrides into the shard's DNS cache.
        if defaults.resolveList != nil { context.shard.hasHostOverrides = true }
        registry.opened(fd, key: key)
        let open = (openSockets[key] ?? 0) + 1
        openSockets[key] = open
        if open > peakOpenSockets[key] ?? 0 { peakOpenSockets[key] = open }
        counters.socketOpened()
        return fd
    }

    /// curl closes every socket through here, so the epoll set never watches a closed (or reused) fd.
    func closeSocket(_ socket: curl_socket_t) -> Int32 {
        if let key = registry.forget(socket) {
            let open = (openSockets[key] ?? 1) - 1
            openSockets[key] = open > 0 ? open : nil
            counters.socketClosed()
            if multiplexedKeys.contains(key) { pass.keyEvents.append(.connectionsChanged(key, unexpected: false)) }
        }
        counters.socketsWatched.store(registry.watched, ordering: .relaxed)
        counters.epollControlCalls.store(registry.controlCalls, ordering: .relaxed)
        return close(socket)
    }
}
