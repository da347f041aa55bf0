// Curlew — what a session is doing with one host.

/// The figures of one host (scheme, host and port) in a session: its queue, running requests and
/// connections.
public struct HostStatistics: Sendable, Hashable {
    /// `scheme://host:port`.
    public var host: String
    /// Requests waiting in the admission queue for a free connection.
    public var queuedRequests: Int
    /// Requests libcurl is running.
    public var runningRequests: Int
    /// Connections open now (in use or idle), counted as curl opens and closes their sockets.
    public var openConnections: Int
    /// The most connections that were open at once.
    public var peakOpenConnections: Int
}
