// Curlew — one libcurl multi handle among the loop's shards.

import CCurl
import CCurlShims

/// One `CURLM` driven by the loop, with its own timer and count of transfers.
///
/// libcurl 7.88 does work proportional to the transfers and connections of a multi handle on every
/// transfer it starts and removes (measured: about 70 ns per open connection, so 0.7 ms per request at
/// 10,000 in flight). The loop therefore spreads transfers over shards of at most ``EventLoop/shardSize``
/// transfers each; at ordinary concurrency everything stays in shard 0 and shares one connection cache.
/// Confined to the loop thread.
final class MultiShard {
    let index: Int
    let multi: UnsafeMutableRawPointer
    /// When curl wants `CURL_SOCKET_TIMEOUT`, in monotonic nanoseconds.
    var deadline: UInt64?
    /// Transfers currently added to this multi handle.
    var active = 0
    unowned(unsafe) let loop: EventLoop

    init?(index: Int, loop: EventLoop, configuration: SessionConfiguration) {
        guard let multi = curl_multi_init() else { return nil }
        self.index = index
        self.multi = multi
        self.loop = loop
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = curlew_multi_setopt_socket_callback(multi, CurlCallbacks.socket)
        _ = curlew_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me)
        _ = curlew_multi_setopt_timer_callback(multi, CurlCallbacks.timer)
        _ = curlew_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me)
        _ = curlew_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
        _ = curlew_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxConnectionsTotal)
        _ = curlew_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.effectiveIdleConnections)
    }

    /// Lets curl act on a ready socket, or on its timer when `fd` is `CURL_SOCKET_TIMEOUT`.
    func action(_ fd: curl_socket_t, flags: Int32) {
        var running: Int32 = 0
        _ = curl_multi_socket_action(multi, fd, flags, &running)
    }

    /// Closes the multi handle; its idle connections are closed through the loop's close callback.
    func cleanup() {
        curl_multi_cleanup(multi)
    }
}
