// Curlew — how long connections and name resolutions live, and where host names point.

/// Settings about the connections a session keeps and how it finds hosts.
public struct ConnectionOptions: Sendable, Hashable {
    /// A host name mapped to fixed addresses, skipping DNS (`CURLOPT_RESOLVE`).
    public struct HostOverride: Sendable, Hashable {
        /// The host name as it appears in URLs.
        public var host: String
        /// The port the override applies to.
        public var port: Int
        /// The addresses to connect to instead, IPv4 or IPv6 (without brackets).
        public var addresses: [String]

        /// Maps `host:port` to `addresses`.
        public init(host: String, port: Int, addresses: [String]) {
            self.host = host
            self.port = port
            self.addresses = addresses
        }

        /// The `CURLOPT_RESOLVE` entry.
        var entry: String {
            let list = addresses.map { $0.contains(":") ? "[\($0)]" : $0 }.joined(separator: ",")
            return "\(host):\(port):\(list)"
        }
    }

    /// Close a kept-alive connection that has been idle this long (whole seconds, rounded up, at least
    /// 1 s) rather than reuse it; nil: libcurl's default (a connection idle for 119 s is closed).
    public var maxIdleTime: Duration? = nil
    /// Close a connection this long after it was opened, once its current transfer ends (so a
    /// long-lived pool follows DNS changes and load balancers); nil: no limit (also on libcurl 8.17 and
    /// later, whose own default is 24 hours). Whole seconds, rounded up, and at least 2 s before libcurl
    /// 8.15 (which counts whole seconds and takes 0 as no limit), 1 s from 8.15.
    public var maxLifetime: Duration? = nil
    /// How long resolved addresses are kept; nil: libcurl's default (60 s); `.zero`: never kept.
    /// Whole seconds, rounded up.
    public var dnsCacheTimeout: Duration? = nil
    /// Host names pointed at fixed addresses, for every request of the session (service discovery,
    /// tests). A host with an override is never looked up in DNS.
    public var hostOverrides: [HostOverride] = []

    /// The defaults: libcurl's idle and DNS lifetimes, no connection age limit, no overrides.
    public init() {}
}

extension Duration {
    /// Whole seconds, rounded up (libcurl's connection and DNS settings take seconds).
    var wholeSecondsRoundedUp: Int {
        let (seconds, attoseconds) = components
        return Int(clamping: seconds) + (attoseconds > 0 ? 1 : 0)
    }
}
