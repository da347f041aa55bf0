// Curlew — one libcurl multi handle among the loop's shards.

import CCurl
import CCurlShims

/// One `CURLM` driven by the loop, with its own timer and count of transfers.
///
/// libcurl does work proportional to the transfers and connections of a multi handle on every transfer
/// it starts and removes (measured on 7.88: about 70 ns per open connection, so 0.7 ms per request at
/// 10,000 in flight). The state machine therefore spreads transfers over shards of at most
/// ``LoopThread/shardSize`` transfers each, when the pool is explicitly unlimited and the host cannot
/// multiplex; otherwise each host keeps to one shard, where libcurl can reuse and multiplex its
/// connections. At ordinary concurrency everything stays in shard 0. Not `Sendable`: loop thread only.
final class MultiShard {
    let index: Int
    let multi: UnsafeMutableRawPointer
    /// When curl wants `CURL_SOCKET_TIMEOUT`, in monotonic nanoseconds.
    var deadline: UInt64?
    /// Whether the session's host overrides are in this shard's DNS cache yet.
    var hasHostOverrides = false
    unowned(unsafe) let thread: LoopThread

    init?(index: Int, thread: LoopThread, configuration: SessionConfiguration) {
        guard let multi = curl_multi_init() else { return nil }
        self.index = index
        self.multi = multi
        self.thread = thread
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = curlew_multi_setopt_socket_callback(multi, CurlCallbacks.socket)
        _ = curlew_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me)
        _ = curlew_multi_setopt_timer_callback(multi, CurlCallbacks.timer)
        _ = curlew_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me)
        // The engine enforces the limits with its own queue; libcurl's are a backstop.
        _ = curlew_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(0, configuration.maxConnectionsPerHost))
        _ = curlew_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, max(0, configuration.maxConnectionsTotal))
        _ = curlew_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.effectiveIdleConnections)
        _ = curlew_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, max(1, configuration.maxConcurrentStreams))
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
