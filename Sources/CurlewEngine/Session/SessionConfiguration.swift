// Curlew — the settings a session applies to every transfer.

/// Settings a ``CurlSession`` applies to every transfer, with defaults suited to server workloads.
public struct SessionConfiguration: Sendable, Hashable {
    /// How proxies are chosen.
    public enum Proxy: Sendable, Hashable {
        /// Never use a proxy; the `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy` environment
        /// variables are ignored. The default.
        case none
        /// Honour the `*_proxy` environment variables, as the `curl` command-line tool does.
        case environment
        /// Use this proxy URL (for example `http://proxy.internal:3128`) for every request.
        case url(String)
    }

    /// Time allowed for name resolution plus connecting (including the TLS handshake). Default 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// Time allowed for a whole exchange, or `nil` for no limit. Default 60 s.
    public var totalTimeout: Duration? = .seconds(60)
    /// A transfer slower than ``lowSpeedLimit`` bytes per second for this long fails. Default 30 s.
    public var lowSpeedTime: Duration = .seconds(30)
    /// The bytes-per-second floor for ``lowSpeedTime``; 0 disables the check. Default 1.
    public var lowSpeedLimit: Int = 1
    /// Ask for compressed responses (gzip, deflate, br, zstd: whatever this libcurl supports) and
    /// decode them transparently. Default on.
    public var automaticDecompression: Bool = true
    /// Verify the server's TLS certificate and host name. Default on; turn off only for tests.
    public var verifyTLS: Bool = true
    /// The `User-Agent` sent when a request sets none.
    public var userAgent: String = "Curlew/0.1"
    /// The largest decoded response body accepted, in bytes. Default 128 MiB.
    public var maxResponseBodySize: Int = 128 * 1024 * 1024
    /// The largest response head (status line and header fields) accepted, in bytes. Default 256 KiB.
    public var maxResponseHeaderSize: Int = 256 * 1024
    /// Most connections open to one host at once; requests beyond it wait for a free connection.
    /// 0 means no limit. Default 0.
    public var maxConnectionsPerHost: Int = 0
    /// Most connections open in total; 0 means no limit. Default 0.
    public var maxConnectionsTotal: Int = 0
    /// How many idle connections are kept open for reuse. Default 1024; never below the connection limits.
    public var maxIdleConnections: Int = 1024
    /// Most easy handles kept for reuse after their transfer ends. Default 256.
    public var maxPooledHandles: Int = 256
    /// Send `Expect: 100-continue` for request bodies of at least this many bytes and wait for the
    /// server's interim answer; `nil` (the default) never sends it.
    public var expectContinueThreshold: Int? = nil
    /// Whether and which proxy to use. Default ``Proxy/none``.
    public var proxy: Proxy = .none
    /// Enable TCP keep-alive probes on idle connections. Default on.
    public var tcpKeepAlive: Bool = true
    /// libcurl's receive buffer per transfer, in bytes. Default 256 KiB: with curl's 16 KiB a 256 MiB
    /// download to memory ran at about 0.8× a C libcurl client; from 64 KiB up it matched or beat it.
    public var receiveBufferSize: Int = 256 * 1024
    /// How many distinct URLs the session keeps in libcurl's parsed form (0 turns the cache off).
    ///
    /// Every URL is parsed with libcurl's parser before anything is queued, which costs several thousand
    /// instructions; requests to a URL parsed recently reuse the parsed form. When the cache is full it
    /// is emptied and starts over.
    public var parsedURLCacheCapacity: Int = 256

    /// The default configuration.
    public init() {}

    /// The idle-connection cache size actually applied: never below the concurrency the limits allow.
    var effectiveIdleConnections: Int {
        max(maxIdleConnections, maxConnectionsTotal, maxConnectionsPerHost)
    }
}
