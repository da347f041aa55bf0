// Curlew — counters of the loopback test server.

/// What ``LocalHTTPServer`` has seen so far.
public struct ServerStatistics: Sendable, Equatable {
    /// Connections accepted.
    public var connectionsAccepted = 0
    /// Connections currently open.
    public var connectionsOpen = 0
    /// The most connections that were open at once.
    public var peakConnectionsOpen = 0
    /// Connections closed (by either side).
    public var connectionsClosed = 0
    /// Complete requests received.
    public var requestsReceived = 0

    /// Creates zeroed statistics.
    public init() {}
}
