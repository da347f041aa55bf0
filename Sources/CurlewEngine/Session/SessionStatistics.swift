// Curlew — a snapshot of what a session's engine is doing.

/// A snapshot of a session's engine counters, for monitoring and for tests that bound memory.
public struct SessionStatistics: Sendable, Hashable {
    /// Transfers libcurl is running.
    public var activeTransfers: Int
    /// Requests waiting in the admission queue for a free connection.
    public var queuedTransfers: Int
    /// Connections open now, in use or idle (sockets curl opened and has not closed).
    public var openConnections: Int
    /// The most connections that were open at once.
    public var peakOpenConnections: Int
    /// Easy handles waiting in the reuse pool.
    public var pooledHandles: Int
    /// Easy handles created since the session started (reuse keeps this low).
    public var handlesCreated: Int
    /// Response-body bytes currently reserved in memory across all transfers.
    public var bufferedBytes: Int
    /// The highest ``bufferedBytes`` seen.
    public var peakBufferedBytes: Int
    /// The largest body buffer any single transfer reserved.
    public var largestTransferBuffer: Int
    /// Transfers that ended with a response.
    public var completedTransfers: Int
    /// Transfers that ended with an error other than cancellation.
    public var failedTransfers: Int
    /// Transfers aborted because their task was cancelled.
    public var cancelledTransfers: Int
    /// New connections opened since the session started (a transfer over a reused connection opens none).
    public var connectionsOpened: Int
    /// Sockets currently registered with the loop's readiness set.
    public var socketsWatched: Int
    /// `epoll_ctl` calls made since the session started.
    public var epollControlCalls: Int
    /// CPU time the loop thread has used.
    public var loopCPUTime: Duration
}
