// Curlew — what makes two requests able to share a connection.

/// The identity of the connections a request may use: requests with equal keys share the connection
/// limit, the admission queue and kept-alive connections.
///
/// Scheme, host (lowercased, as libcurl's URL parser normalises it) and port (the scheme's default when
/// the URL names none), plus what a request may set apart: a Unix socket path and a TLS identity (its
/// own client certificate or pins). The proxy is a session setting, the same for every key.
///
/// A class: every request carries its key from the caller's thread to the loop, and the key of a cached
/// URL is one shared object, so passing it is a retain and comparing it usually an identity check.
final class PoolKey: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int
    /// The Unix domain socket the request connects through, if any.
    let unixSocketPath: String?
    /// A request's own TLS settings (client certificate, pins), if any: connections made with other
    /// settings are not shared with it.
    let tlsIdentity: TLSIdentity?
    /// Whether requests with this key speak HTTP/1.1 only (a request that sends trailers, which libcurl
    /// sends over HTTP/1.1 only, or a streamed response where a paused HTTP/2 stream would stall its
    /// connection): their connections are never shared with HTTP/2 ones.
    let http1Only: Bool
    /// Hashed once: the loop looks the key up for every request, and the key of a cached URL is reused.
    private let precomputedHash: Int
    /// Whether the scheme is https (TLS options apply).
    let isHTTPS: Bool

    /// The host as OpenTelemetry's `server.address` names it: an IPv6 literal without its brackets.
    var serverAddress: String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    init(
        scheme: String, host: String, port: Int, unixSocketPath: String? = nil, tlsIdentity: TLSIdentity? = nil,
        http1Only: Bool = false
    ) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.unixSocketPath = unixSocketPath
        self.tlsIdentity = tlsIdentity
        self.http1Only = http1Only
        var hasher = Hasher()
        hasher.combine(scheme)
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(unixSocketPath)
        hasher.combine(tlsIdentity)
        hasher.combine(http1Only)
        precomputedHash = hasher.finalize()
        isHTTPS = scheme == "https"
    }

    /// This key, set apart by a socket path and a TLS identity.
    func with(unixSocketPath: String?, tlsIdentity: TLSIdentity?) -> PoolKey {
        PoolKey(
            scheme: scheme, host: host, port: port, unixSocketPath: unixSocketPath, tlsIdentity: tlsIdentity,
            http1Only: http1Only)
    }

    /// This key for requests that must speak HTTP/1.1.
    func speakingHTTP1Only() -> PoolKey {
        http1Only
            ? self
            : PoolKey(
                scheme: scheme, host: host, port: port, unixSocketPath: unixSocketPath, tlsIdentity: tlsIdentity,
                http1Only: true)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(precomputedHash)
    }

    static func == (lhs: PoolKey, rhs: PoolKey) -> Bool {
        lhs === rhs
            || lhs.precomputedHash == rhs.precomputedHash && lhs.port == rhs.port && lhs.scheme == rhs.scheme
            && lhs.host == rhs.host && lhs.unixSocketPath == rhs.unixSocketPath && lhs.tlsIdentity == rhs.tlsIdentity
            && lhs.http1Only == rhs.http1Only
    }

    /// `scheme://host:port`, with the socket and a TLS identity marker when set.
    var description: String {
        var text = "\(scheme)://\(host):\(port)"
        if let unixSocketPath { text += " via \(unixSocketPath)" }
        if tlsIdentity != nil { text += " (own TLS identity)" }
        if http1Only { text += " (HTTP/1.1)" }
        return text
    }

    /// A request's own TLS settings, as part of a pool key.
    struct TLSIdentity: Hashable, Sendable {
        let clientIdentity: ClientIdentity?
        let pins: [String]?
    }

}
