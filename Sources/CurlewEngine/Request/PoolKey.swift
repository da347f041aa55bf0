// Curlew — what makes two requests able to share a connection.

/// The identity of the connections a request may use: requests with equal keys share the connection
/// limit, the admission queue and kept-alive connections.
///
/// Scheme, host (lowercased, as libcurl's URL parser normalises it) and port (the scheme's default when
/// the URL names none), plus what a request may set apart: a Unix socket path and a TLS identity (its
/// own client certificate or pins). The proxy is a session setting, the same for every key.
struct PoolKey: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int
    /// The Unix domain socket the request connects through, if any.
    var unixSocketPath: String? = nil
    /// A request's own TLS settings (client certificate, pins), if any: connections made with other
    /// settings are not shared with it.
    var tlsIdentity: TLSIdentity? = nil

    /// `scheme://host:port`, with the socket and a TLS identity marker when set.
    var description: String {
        var text = "\(scheme)://\(host):\(port)"
        if let unixSocketPath { text += " via \(unixSocketPath)" }
        if tlsIdentity != nil { text += " (own TLS identity)" }
        return text
    }

    /// A request's own TLS settings, as part of a pool key.
    struct TLSIdentity: Hashable, Sendable {
        let clientIdentity: ClientIdentity?
        let pins: [String]?
    }

    /// Whether connections for this key may carry several requests at once (HTTP/2 over TLS, which
    /// libcurl negotiates through ALPN for https by default): such a key's transfers must stay in one
    /// multi handle, where libcurl can multiplex them.
    var mayMultiplex: Bool { scheme == "https" }
}
