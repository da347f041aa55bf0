// Curlew — what h2_server.py counted: connections, requests, streams, resets and GOAWAYs.

/// What `h2_server.py` counted (its `/stats`, or the `stats` command).
package struct H2ServerStats: Decodable, Sendable {
    package struct Connection: Decodable, Sendable {
        package let `protocol`: String?
        package let requests: Int
        /// The most requests this connection had in progress at once.
        package let peakStreams: Int
        package let closed: Bool

        enum CodingKeys: String, CodingKey {
            case `protocol`, requests, closed
            case peakStreams = "peak_streams"
        }
    }

    /// Connections accepted.
    package let connections: Int
    package let openConnections: Int
    package let peakOpenConnections: Int
    /// Requests received (each retry counts again).
    package let requests: Int
    /// Requests received and not yet answered, over all connections.
    package let inProgress: Int
    /// The most requests one connection had in progress at once.
    package let peakStreams: Int
    package let resetsSent: Int
    package let goawaysSent: Int
    /// RST_STREAM frames received from clients.
    package let clientResets: Int
    /// HTTP/2 protocol errors the server saw (a client exceeding the stream limit shows here).
    package let protocolErrors: [String]
    /// Per connection, keyed by its number.
    package let byConnection: [String: Connection]

    enum CodingKeys: String, CodingKey {
        case connections, requests
        case openConnections = "open_connections"
        case peakOpenConnections = "peak_open_connections"
        case inProgress = "in_progress"
        case peakStreams = "peak_streams"
        case resetsSent = "resets_sent"
        case goawaysSent = "goaways_sent"
        case clientResets = "client_resets"
        case protocolErrors = "protocol_errors"
        case byConnection = "by_connection"
    }
}
