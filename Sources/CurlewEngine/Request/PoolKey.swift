// Curlew — what makes two requests able to share a connection.

/// The identity of the connections a request may use: requests with equal keys share the connection
/// limit, the admission queue and kept-alive connections.
///
/// Scheme, host (lowercased, as libcurl's URL parser normalises it) and port (the scheme's default when
/// the URL names none). The proxy is a session setting, the same for every key of a session.
struct PoolKey: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    /// `scheme://host:port`.
    var description: String { "\(scheme)://\(host):\(port)" }

    /// Whether connections for this key may carry several requests at once (HTTP/2 over TLS, which
    /// libcurl negotiates through ALPN for https by default): such a key's transfers must stay in one
    /// multi handle, where libcurl can multiplex them.
    var mayMultiplex: Bool { scheme == "https" }
}
