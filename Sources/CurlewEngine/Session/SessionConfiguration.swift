// Curlew — the settings a session applies to every transfer.

/// Settings a ``CurlSession`` applies to every transfer, with defaults suited to server workloads.
public struct SessionConfiguration: Sendable {
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
    ///
    /// It runs from the moment the request is handed to the session: time spent waiting in the
    /// admission queue for a free connection counts, and so does every redirect hop. Never fires early.
    public var totalTimeout: Duration? = .seconds(60)
    /// A running transfer that sends and receives no byte for this long fails with
    /// ``TransportError/Timeout/idle``; `nil` turns the check off. Default 30 s.
    ///
    /// The engine keeps this timer itself, to the millisecond: a server that stalls after sending part of
    /// a response is noticed at the idle timeout (not seconds later, as curl's averaged low-speed check
    /// would), and never earlier. Waiting for the first response byte counts as idle time.
    public var idleTimeout: Duration? = .seconds(30)
    /// A transfer slower than ``lowSpeedLimit`` bytes per second for this long fails (curl's low-speed
    /// check, averaged over its time window; rounded up to whole seconds). Default 30 s.
    public var lowSpeedTime: Duration = .seconds(30)
    /// The bytes-per-second floor for ``lowSpeedTime``; 0 (the default) disables the check, for which
    /// ``idleTimeout`` is the sharper tool.
    public var lowSpeedLimit: Int = 0
    /// Ask for compressed responses (`Accept-Encoding: deflate, gzip`) and decode them transparently,
    /// checking that the coded stream ends (a gzip member or deflate stream that stops half way fails
    /// with ``TransportError/Code/badContentEncoding``, even when the framing looks complete). br and
    /// zstd are not offered: libcurl, which decodes them, does not check their end. A body in a coding a
    /// request asked for itself (its own `Accept-Encoding`) is handed over as sent. Default on.
    public var automaticDecompression: Bool = true
    /// Which HTTP versions are used. Default ``HTTPVersionPolicy/automatic``: HTTP/2 over TLS when the
    /// server offers it, HTTP/1.1 otherwise.
    public var httpVersion: HTTPVersionPolicy = .automatic
    /// Most requests one HTTP/2 connection carries at once. Default 256; libcurl uses the lower of this
    /// and the server's `SETTINGS_MAX_CONCURRENT_STREAMS`.
    ///
    /// Over HTTP/2 the per-host limit counts connections, not requests. Until a host has answered, at
    /// most 100 requests go to it, sharing the first connection. Then the engine finds the server's
    /// limit, which libcurl does not report: it admits one request more than the connection is known to
    /// carry at a time, and either libcurl puts it on the connection (the limit is higher) or opens a new
    /// connection for it (the limit is what the connection carries), up to this cap. Further connections
    /// open one at a time as earlier ones fill; each takes up to 100 streams as soon as it is up, the rest
    /// of its share once its first response has arrived. 500 requests to a cold host that allows 100,
    /// 128 or 256 streams use 5, 4 and 2 connections. A server that allows fewer than 100 (RFC 9113
    /// recommends at least 100) refuses part of a cold host's first burst, which libcurl sends before the
    /// server's settings arrive; libcurl sends each refused request again on a new connection.
    public var maxConcurrentStreams: Int = 256
    /// TLS: trusted certificate authorities, pins, client certificate, minimum version, resumption.
    public var tls = SessionConfiguration.TLS()
    /// Whether and where cookies are kept. Default ``CookieStorage/disabled``.
    public var cookies: CookieStorage = .disabled
    /// Connection and name-resolution lifetimes, and host-name overrides.
    public var connections = ConnectionOptions()
    /// Verify the server's TLS certificate and host name (``SessionConfiguration/TLS/verifiesPeer``). Default
    /// on; turn off only for tests.
    public var verifyTLS: Bool {
        get { tls.verifiesPeer }
        set { tls.verifiesPeer = newValue }
    }
    /// The `User-Agent` sent when a request sets none.
    public var userAgent: String = "Curlew/0.1"
    /// The largest decoded response body accepted, in bytes. Default 128 MiB.
    public var maxResponseBodySize: Int = 128 * 1024 * 1024
    /// The largest response head accepted, in bytes: the status lines and header fields of every head
    /// of one response, interim (1xx) heads included. Default 256 KiB; at most 300 KiB, libcurl's own
    /// cap (a larger setting acts as 300 KiB). A single header line is further capped at 100 KiB by
    /// libcurl; either way the failure is ``TransportError/Code/headersTooLarge``.
    public var maxResponseHeaderSize: Int = 256 * 1024
    /// Most requests running at once to one host (scheme, host and port), hence most connections open
    /// to it over HTTP/1.1; further requests wait in the session's queue, first come first served, and
    /// a host at its limit never delays requests to another. 0 means no limit. Default 64.
    ///
    /// 64 keeps a busy upstream saturated from one client (the benchmarks run 64 in flight) without
    /// opening thousands of sockets when a burst arrives: 10,000 concurrent calls then share 64
    /// kept-alive connections instead of each opening one. Size it from the throughput you need and the
    /// upstream's latency: one connection completes about `1 / latency` requests per second, so with 8
    /// connections and a 50 ms upstream, 10,000 requests need about 10,000 × 0.05 / 8 ≈ 63 s. Queued
    /// requests count their wait against ``totalTimeout``.
    public var maxConnectionsPerHost: Int = 64
    /// Most requests running at once across all hosts, hence most connections in use; 0 means no
    /// limit. Default 512, well under the usual 1,024 file descriptors per process. Idle connections
    /// are closed to make room when the limit is reached.
    public var maxConnectionsTotal: Int = 512
    /// How many idle connections are kept open for reuse. Default 1024; never below the connection limits.
    public var maxIdleConnections: Int = 1024
    /// Most easy handles kept for reuse after their transfer ends. Default 256.
    public var maxPooledHandles: Int = 256
    /// Send `Expect: 100-continue` for request bodies of at least this many bytes and wait for the
    /// server's interim answer; `nil` (the default) never sends it.
    public var expectContinueThreshold: Int? = nil
    /// Which redirects are followed, and how. Default ``RedirectPolicy/default``: up to 10 hops, never
    /// from https to http. A request can override it (``TransportRequest/redirectPolicy``).
    public var redirectPolicy: RedirectPolicy = .default
    /// Whether and which proxy to use. Default ``Proxy/none``.
    public var proxy: Proxy = .none
    /// Enable TCP keep-alive probes on idle connections. Default on.
    public var tcpKeepAlive: Bool = true
    /// libcurl's receive buffer per transfer, in bytes. Default 64 KiB.
    ///
    /// libcurl allocates this buffer for every transfer and frees it at the end. At 64 KiB a 256 MiB
    /// download runs ahead of a C libcurl client with curl's 16 KiB; 256 KiB makes such downloads about
    /// 10% faster again, but glibc then hands the memory back and faults it in anew transfer after
    /// transfer, which cost small requests at 16–64 in flight 15–25% of their throughput. Raise it for a
    /// session that mostly downloads large bodies.
    public var receiveBufferSize: Int = 64 * 1024
    /// Unread bytes of a streamed response the engine holds before it stops reading the socket, at first.
    /// Default 192 KiB.
    ///
    /// This is each stream's floor. A stream whose reader keeps up (it finds nothing to read while the
    /// engine has paused the transfer for it) doubles its mark, up to ``maxStreamBufferSize``, drawing the
    /// growth from ``streamBufferBudget``; a reader that stops never makes it grow. Over HTTP/1.1 a
    /// streamed response then holds at most its current mark plus ``receiveBufferSize`` however fast the
    /// server sends and however it is compressed; see the Streaming article for HTTP/2. Event streams
    /// keep their floor. Smaller values lower the memory per stream.
    public var streamBufferSize: Int = 192 * 1024
    /// Most unread bytes a streamed response's mark grows to for a reader that keeps up. Default 4 MiB.
    ///
    /// On two cores over loopback a 256 MiB download read at full speed took 15–30% less CPU with marks
    /// that grow to 4 MiB than with a fixed 192 KiB one, at 6 MiB more memory (see the Streaming article).
    /// Half of it is also where a waiting reader is woken at once rather than at the end of the loop's
    /// pass. Set it to ``streamBufferSize`` to keep every mark at its floor.
    public var maxStreamBufferSize: Int = 4 * 1024 * 1024
    /// Bytes above their floors that all of the session's streamed responses may hold together as their
    /// marks grow. Default 64 MiB.
    ///
    /// A stream whose growth it refuses keeps the mark it has for the rest of its life (and its reader is
    /// then woken at half that mark); streams never fail for it.
    public var streamBufferBudget: Int = 64 * 1024 * 1024
    /// Most unsent bytes of a streamed request body the engine holds before a producer's write waits.
    /// Default 1 MiB.
    ///
    /// The engine keeps the chunks written (without copying them) until libcurl takes them, so a producer
    /// that writes new arrays can have this much held per request; one that writes the same array again
    /// holds one. Smaller values lower that; larger ones let a producer that is late to run keep the
    /// upload going (on two cores over loopback a 256 MiB upload ran at about 0.85× a C client reading
    /// through `CURLOPT_READFUNCTION` with 192 KiB, 0.92× with 1 MiB).
    public var requestBodyBufferSize: Int = 1024 * 1024
    /// How many distinct URLs the session keeps in libcurl's parsed form (0 turns the cache off).
    ///
    /// Every URL is parsed with libcurl's parser before anything is queued, which costs several thousand
    /// instructions; requests to a URL parsed recently reuse the parsed form. When the cache is full it
    /// is emptied and starts over.
    public var parsedURLCacheCapacity: Int = 256
    /// Where the session's metrics and spans go, and what they carry (see ``Telemetry``). By default the
    /// process's bootstrapped metrics factory and tracer, read when the session is created.
    public var telemetry = Telemetry()
    /// How long a graceful shutdown (``CurlSession/shutdownGracefully(within:)``, or the service group's
    /// graceful shutdown of a session run as a `Service`) lets requests in flight finish before it cancels
    /// them. Default 10 seconds.
    public var gracefulShutdownTimeout: Duration = .seconds(10)

    /// How the loaded libcurl differs from other versions; tests set flags to run a fallback on any version.
    var quirks = CurlQuirks.current

    /// The default configuration.
    public init() {}

    /// The idle-connection cache size actually applied: never below the concurrency the limits allow.
    var effectiveIdleConnections: Int {
        max(maxIdleConnections, maxConnectionsTotal, maxConnectionsPerHost)
    }

    /// libcurl's cap on all heads of one response (300 KiB).
    static let curlHeadLimit = 300 * 1024

    /// The head limit the engine enforces: the setting, within libcurl's own cap.
    var effectiveMaxResponseHeaderSize: Int {
        min(max(1, maxResponseHeaderSize), Self.curlHeadLimit)
    }
}
