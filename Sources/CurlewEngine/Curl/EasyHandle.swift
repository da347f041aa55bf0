// Curlew — a pooled libcurl easy handle and its session defaults.

import CCurl
import CCurlShims
import HTTPTypes

#if canImport(Glibc)
import Glibc
#endif

/// A libcurl easy handle with its error buffer. Used only on the loop thread.
struct EasyHandle {
    let raw: UnsafeMutableRawPointer
    let errorBuffer: UnsafeMutablePointer<CChar>

    init?() {
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    func destroy() {
        curl_easy_cleanup(raw)
        errorBuffer.deallocate()
    }

    /// How many new connections the last transfer opened (0 when it reused one).
    var connectionsOpened: Int {
        var connects = 0
        _ = curlew_easy_getinfo_long(raw, CURLINFO_NUM_CONNECTS, &connects)
        return connects
    }

    /// Whether a socket error was recorded on this handle (curl keeps it across `curl_easy_reset`).
    var sawSocketError: Bool {
        var osErrno = 0
        _ = curlew_easy_getinfo_long(raw, CURLINFO_OS_ERRNO, &osErrno)
        return osErrno != 0
    }

    /// The text curl wrote into the error buffer for the last transfer, if any.
    var errorText: String? {
        errorBuffer.pointee == 0 ? nil : String(cString: errorBuffer)
    }

    @inline(__always) func set(_ option: CURLoption, _ value: Int) {
        _ = curlew_easy_setopt_long(raw, option, value)
    }

    @inline(__always) func set(_ option: CURLoption, _ value: UnsafeRawPointer?) {
        _ = curlew_easy_setopt_pointer(raw, option, value)
    }

    func set(_ option: CURLoption, string: String) {
        // String options are copied by libcurl (since 7.17), so the temporary C string may go away.
        _ = string.withCString { curlew_easy_setopt_pointer(raw, option, $0) }
    }

    /// Applies the session's defaults. Run on a new handle and after every `curl_easy_reset`.
    func applyDefaults(_ defaults: HandleDefaults) {
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_ERRORBUFFER, UnsafeRawPointer(errorBuffer))
        _ = curlew_easy_setopt_data_callback(raw, CURLOPT_WRITEFUNCTION, CurlCallbacks.write)
        _ = curlew_easy_setopt_data_callback(raw, CURLOPT_HEADERFUNCTION, CurlCallbacks.header)
        // Every socket is opened and closed through the loop thread, which watches and counts them.
        _ = curlew_easy_setopt_opensocket_callback(raw, CurlCallbacks.openSocket)
        _ = curlew_easy_setopt_closesocket_callback(raw, CurlCallbacks.closeSocket)
        set(CURLOPT_CLOSESOCKETDATA, defaults.thread.map { UnsafeRawPointer($0) })
        set(CURLOPT_CONNECTTIMEOUT_MS, defaults.connectTimeoutMilliseconds)
        // No CURLOPT_TIMEOUT_MS here: the state machine owns the total timeout (queued time included);
        // each transfer gets only a backstop (see `TransferContext.applyRequest`).
        if defaults.lowSpeedLimit > 0 {
            set(CURLOPT_LOW_SPEED_LIMIT, defaults.lowSpeedLimit)
            set(CURLOPT_LOW_SPEED_TIME, defaults.lowSpeedSeconds)
        }
        // No CURLOPT_ACCEPT_ENCODING: curl does not decode bodies. The engine undoes gzip and deflate
        // itself, where a coded stream that stops early is caught (libcurl accepts it as a whole body);
        // the Accept-Encoding line, like User-Agent, comes from the header list.
        // TLS options are set per https transfer (see `applyTLS`): plain requests skip them.
        // TLS sessions go through the session's share handle (with a cookie jar, each transfer picks its
        // share in `applyRequest`).
        if !defaults.cookiesEnabled, let share = defaults.share { _ = curlew_easy_setopt_share(raw, share) }
        if let seconds = defaults.maxIdleSeconds { set(CURLOPT_MAXAGE_CONN, seconds) }
        if let seconds = defaults.maxLifetimeSeconds { set(CURLOPT_MAXLIFETIME_CONN, seconds) }
        if let seconds = defaults.dnsCacheSeconds { set(CURLOPT_DNS_CACHE_TIMEOUT, seconds) }
        switch defaults.proxy {
        case .none:
            set(CURLOPT_PROXY, string: "")  // "" disables proxies, including the *_proxy variables
            // With no proxy the exclusion list does not matter; set, it spares libcurl reading no_proxy
            // and NO_PROXY from the environment on every new connection lookup (two getenv per request).
            set(CURLOPT_NOPROXY, string: "")
        case .environment: break
        case .url(let url): set(CURLOPT_PROXY, string: url)
        }
        // No CURLOPT_PROTOCOLS_STR: every URL was checked to be http(s) before it was queued, redirects
        // are not followed, and parsing that list again after each reset showed in profiles.
        set(CURLOPT_TCP_KEEPALIVE, defaults.tcpKeepAlive ? 1 : 0)
        set(CURLOPT_BUFFERSIZE, defaults.receiveBufferSize)
    }
}

/// The session settings in the form the loop applies to easy handles (a class: the loop hands it
/// around on every transfer, and a reference is cheaper to pass than a copy of its strings). Not
/// `Sendable`: made and used on the loop thread.
final class HandleDefaults {
    /// The loop thread, for the close-socket callback; bound once the thread exists.
    private(set) var thread: UnsafeMutableRawPointer?
    let connectTimeoutMilliseconds: Int
    /// The HTTP versions used.
    let httpVersion: HTTPVersionPolicy
    /// How the loaded libcurl differs from others (see ``CurlQuirks``).
    let quirks: CurlQuirks
    /// Whether a cleartext prior-knowledge connection can carry more than one request (see
    /// ``CurlQuirks/priorKnowledgeReusesConnections``); where it cannot, each request gets a connection of
    /// its own.
    let priorKnowledgeReusesConnections: Bool
    /// The session's TLS options, worked out once.
    let tls: TLSSetup
    /// Client identities that share a certificate, kept apart in libcurl's connection and TLS session
    /// caches.
    var identityVariants = ClientIdentityVariants()
    let maxIdleSeconds: Int?
    let maxLifetimeSeconds: Int?
    let dnsCacheSeconds: Int?
    /// `CURLOPT_RESOLVE` entries, as a curl list; applied once per shard (libcurl keeps them in the
    /// shard's DNS cache for good). Built and freed on the loop thread.
    private(set) var resolveList: UnsafeMutablePointer<curl_slist>?
    /// The share handle that carries TLS sessions across the session's handles; loop thread only, so
    /// it needs no lock callbacks (every access to a share is a curl call on the loop thread).
    private(set) var share: UnsafeMutableRawPointer?
    /// With a cookie jar: the share that carries the jar (and TLS sessions) for transfers that handle
    /// cookies. Transfers that opt out use `share`, which detaches them from the jar.
    private(set) var cookieShare: UnsafeMutableRawPointer?
    let cookieStorage: CookieStorage
    var cookiesEnabled: Bool { cookieShare != nil }
    let lowSpeedLimit: Int
    let lowSpeedSeconds: Int
    let automaticDecompression: Bool
    let verifyTLS: Bool
    let proxy: SessionConfiguration.Proxy
    let tcpKeepAlive: Bool
    let receiveBufferSize: Int
    let expectContinueThreshold: Int?
    /// Header lines every request sends unless it sets the field itself: `User-Agent` and
    /// `Accept-Encoding`. Sent as header-list lines because libcurl formats its own User-Agent and
    /// Accept-Encoding lines character by character twice per transfer (measured on 7.88: 5k instructions).
    let defaultHeaderLines: [(HTTPField.Name, String)]
    /// `defaultHeaderLines` as a curl list, for requests that add no lines of their own. Built and freed
    /// on the loop thread.
    private(set) var sharedHeaderList: UnsafeMutablePointer<curl_slist>?

    init(_ configuration: SessionConfiguration) {
        connectTimeoutMilliseconds = max(1, configuration.connectTimeout.milliseconds)
        httpVersion = configuration.httpVersion
        quirks = configuration.quirks
        priorKnowledgeReusesConnections = quirks.priorKnowledgeReusesConnections
        tls = TLSSetup(configuration.tls)
        let connections = configuration.connections
        if quirks.connectionAgesInWholeSeconds {
            // Retired when the idle time or age, truncated to whole seconds, is greater than the setting:
            // one second less retires it once the limit (rounded up) has passed. A lifetime of 0 means no
            // limit, so the shortest lifetime libcurl can enforce is 2 s.
            maxIdleSeconds = connections.maxIdleTime.map { max(0, $0.wholeSecondsRoundedUp - 1) }
            maxLifetimeSeconds = connections.maxLifetime.map { max(1, $0.wholeSecondsRoundedUp - 1) }
        } else {
            // Retired when the idle time or age in milliseconds is greater than the setting; 0 turns the
            // limit off, so the shortest is 1 s.
            maxIdleSeconds = connections.maxIdleTime.map { max(1, $0.wholeSecondsRoundedUp) }
            maxLifetimeSeconds = connections.maxLifetime.map { max(1, $0.wholeSecondsRoundedUp) }
                ?? (quirks.connectionLifetimeHasDefault ? 0 : nil)
        }
        dnsCacheSeconds = connections.dnsCacheTimeout.map { max(0, $0.wholeSecondsRoundedUp) }
        var resolve: UnsafeMutablePointer<curl_slist>?
        for override in connections.hostOverrides where !override.addresses.isEmpty {
            override.entry.withCString { text in
                if let appended = curl_slist_append(resolve, text) { resolve = appended }
            }
        }
        resolveList = resolve
        if configuration.tls.sessionResumption, let handle = curl_share_init() {
            _ = curlew_share_setopt_long(handle, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
            share = handle
        }
        cookieStorage = configuration.cookies
        if configuration.cookies.isEnabled, let handle = curl_share_init() {
            _ = curlew_share_setopt_long(handle, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue))
            if configuration.tls.sessionResumption {
                _ = curlew_share_setopt_long(handle, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
            }
            cookieShare = handle
        }
        lowSpeedLimit = configuration.lowSpeedLimit
        // curl takes whole seconds: round up, so the check never fires before the configured time.
        let (seconds, attoseconds) = configuration.lowSpeedTime.components
        lowSpeedSeconds = max(1, Int(clamping: seconds) + (attoseconds > 0 ? 1 : 0))
        automaticDecompression = configuration.automaticDecompression
        verifyTLS = configuration.verifyTLS
        proxy = configuration.proxy
        tcpKeepAlive = configuration.tcpKeepAlive
        receiveBufferSize = min(max(configuration.receiveBufferSize, 1024), 10 * 1024 * 1024)
        expectContinueThreshold = configuration.expectContinueThreshold
        let lines = DefaultHeaderFields(configuration).fields.map { ($0.name, "\($0.name.rawName): \($0.value)") }
        defaultHeaderLines = lines
        var list: UnsafeMutablePointer<curl_slist>?
        for (_, line) in lines {
            line.withCString { text in
                if let appended = curl_slist_append(list, text) { list = appended }
            }
        }
        sharedHeaderList = list
    }

    /// Whether transfers to `key` may speak HTTP/2 at all, sharing connections or not: whenever libcurl is
    /// not pinned to HTTP/1.1 for them.
    func maySpeakHTTP2(_ key: PoolKey) -> Bool { curlHTTPVersion(key) != CURL_HTTP_VERSION_1_1 }

    /// Whether transfers to `key` may share a connection (HTTP/2): https unless HTTP/1.1 only, or plain
    /// http with prior knowledge where libcurl can reuse such connections.
    func mayMultiplex(_ key: PoolKey) -> Bool {
        if key.http1Only { return false }
        return switch httpVersion {
        case .automatic: key.isHTTPS
        case .http1Only: false
        case .http2PriorKnowledge: key.isHTTPS || priorKnowledgeReusesConnections
        }
    }

    /// Whether every transfer to `key` needs a connection of its own, closed after it: cleartext prior
    /// knowledge with a libcurl that cannot reuse those connections (see `priorKnowledgeReusesConnections`).
    func needsOwnConnection(_ key: PoolKey) -> Bool {
        httpVersion == .http2PriorKnowledge && !key.isHTTPS && !priorKnowledgeReusesConnections && !key.http1Only
    }

    /// Whether `key`'s connections must live in a connection cache of their own: requests held to HTTP/1.1
    /// (trailers, or a fallback in ``CurlQuirks``) on an https host that the session's other requests reach
    /// over HTTP/2. In one cache libcurl would hand their kept HTTP/1.1 connections to requests asking for
    /// HTTP/2, and make such requests wait (`CURLOPT_PIPEWAIT`) for an HTTP/1.1 connection in use.
    func isolates(_ key: PoolKey) -> Bool {
        key.http1Only && key.isHTTPS && httpVersion != .http1Only
    }

    /// `CURLOPT_HTTP_VERSION` for a transfer to `key`. Plain http is pinned to HTTP/1.1 unless prior
    /// knowledge is asked for: libcurl's default would count it as possibly multiplexed.
    func curlHTTPVersion(_ key: PoolKey) -> Int {
        if key.http1Only { return CURL_HTTP_VERSION_1_1 }
        return switch httpVersion {
        case .automatic: key.isHTTPS ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1
        case .http1Only: CURL_HTTP_VERSION_1_1
        case .http2PriorKnowledge:
            key.isHTTPS ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
        }
    }

    /// Binds the handles' close-socket callback to the loop thread that owns them.
    func bind(to thread: LoopThread) {
        self.thread = Unmanaged.passUnretained(thread).toOpaque()
    }

    /// Frees the lists and the share handle (loop thread, once every easy handle is gone).
    func release() {
        if let sharedHeaderList { curl_slist_free_all(sharedHeaderList) }
        sharedHeaderList = nil
        if let resolveList { curl_slist_free_all(resolveList) }
        resolveList = nil
        if let share { curl_share_cleanup(share) }
        share = nil
        if let cookieShare { curl_share_cleanup(cookieShare) }
        cookieShare = nil
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so that a short positive duration never becomes "no limit".
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(clamping: millis)
    }
}
