// Curlew — the public face of the libcurl engine.

public import Logging

import CCurlShims
import HTTPTypes
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP client session: one libcurl multi handle driven by one dedicated event-loop thread.
///
/// Create one session per service and share it: it keeps connections alive and reuses them, pools
/// easy handles, and runs thousands of transfers concurrently without blocking any Swift task.
/// Cancelling the task that awaits ``execute(_:)`` aborts the transfer and closes its connection.
///
/// Call ``shutdown()`` when done, or ``shutdownGracefully(within:)`` to let requests in flight finish
/// first. A session that is simply dropped shuts its loop down too: transfers still in flight fail with
/// ``TransportError/Code/sessionShutDown`` and the thread exits.
///
/// Proxies: by default none is used and the `http_proxy`/`https_proxy`/`all_proxy`/`no_proxy`
/// environment variables are **not** honoured; set ``SessionConfiguration/proxy`` to opt in.
public final class CurlSession: HTTPTransport, Sendable {
    /// The settings every transfer of this session uses.
    public let configuration: SessionConfiguration
    let loop: EventLoop
    private let stopped = Locked(false)
    let urls: ParsedURLCache
    private let defaultFields: DefaultHeaderFields
    /// The session's total timeout in nanoseconds, converted once.
    private let totalTimeoutNanoseconds: UInt64?
    /// What sees each hop start and end (telemetry); nil when nothing records.
    package let hopObserver: (any HopObserver)?
    /// Whether the session's own logger takes debug lines (each request sent and how it ended), read once.
    let logsHopsByDefault: Bool

    /// Starts a session and its event-loop thread.
    ///
    /// - Throws: ``TransportError`` when the loaded libcurl is older than ``LibcurlVersion/minimumSupported``
    ///   (``TransportError/Code/unsupportedLibcurl``), when the user agent holds CR, LF or NUL
    ///   (``TransportError/Code/invalidHeader``), or libcurl cannot be initialised or the thread cannot start.
    public init(
        configuration: SessionConfiguration = SessionConfiguration(),
        logger: Logger = Logger(label: "curlew.engine")
    ) throws(TransportError) {
        // First: below the floor, libcurl lacks functions the rest would call.
        try Libcurl.loaded.requireSupported()
        guard HeaderValidation.isSendable(value: configuration.userAgent) else {
            throw TransportError(
                .invalidHeader, message: "the user agent contains CR, LF or NUL and would not be sent as given")
        }
        self.configuration = configuration
        urls = ParsedURLCache(capacity: configuration.parsedURLCacheCapacity)
        defaultFields = DefaultHeaderFields(configuration)
        totalTimeoutNanoseconds = configuration.totalTimeout.map { UInt64(max(1, $0.nanoseconds)) }
        let telemetry = TelemetryObserver(configuration.telemetry, urls: urls)
        hopObserver = telemetry
        logsHopsByDefault = logger.logLevel <= .debug
        loop = try EventLoop(configuration: configuration, logger: logger, metrics: telemetry?.metrics)
        try loop.start()
    }

    deinit {
        // The loop thread never holds the session, so this runs on a caller's thread unless the last
        // reference was dropped by code the loop resumed; `join` detaches in that case.
        if markStopped() {
            loop.requestShutdown()
            loop.join()
        }
    }

    /// Sends the request and returns the complete response, following redirects as the request's (or
    /// the session's) ``RedirectPolicy`` says.
    ///
    /// The URL and header values are checked before anything is queued. A request waits in the
    /// session's admission queue while its host (or the session) is at its connection limit; the wait
    /// counts against the total timeout. Cancelling the calling task removes a waiting request at once,
    /// or aborts a running transfer on the loop thread and closes its connection, and throws
    /// ``TransportError/Code/cancelled``.
    ///
    /// - Throws: ``TransportError`` for invalid input, transport failures, refused redirects,
    ///   cancellation and shutdown.
    public func execute(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        // Compression makes a new request; any other is sent as it is (a copy retains each of its fields).
        if request.options.requestCompression != nil { return try await send(request.applyingCompression()) }
        return try await send(request)
    }

    /// ``execute(_:)`` for a request whose body is as it is sent.
    @inline(__always)
    private func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        let started = MonotonicClock.now()
        let total = request.timeout.map { UInt64(max(1, $0.nanoseconds)) } ?? totalTimeoutNanoseconds
        let deadline = total.map { started &+ $0 }
        // Handed over, not kept: a copy kept for the redirect path cost about 900 instructions per
        // request. A redirect prepares the request again (its URL is in the session's cache by then).
        let response = try await run(
            PreparedRequest(request, urls: urls), deadline: deadline, isRedirectHop: false, submitted: started)
        // The common case pays nothing for redirects: only a 3xx with a Location goes further.
        guard (300..<400).contains(response.status.code), response.hasLocation else { return response }
        return try await followRedirects(
            from: response, of: request, prepared: PreparedRequest(request, urls: urls), started: started, deadline: deadline)
    }

    /// Runs one transfer (one hop) through the loop.
    // Inlined into `execute`: an async function of its own costs a frame allocation and a switch per request.
    @inline(__always)
    func run(
        _ prepared: consuming PreparedRequest, deadline: UInt64?, isRedirectHop: Bool, submitted: UInt64 = MonotonicClock.now()
    ) async throws(TransportError) -> TransportResponse {
        if let body = prepared.request.body, body.isStream || body.hasTrailers {
            return try await runWithBody(prepared, deadline: deadline, isRedirectHop: isRedirectHop, submitted: submitted)
        }
        let exchange: Exchange
        if observesHops(of: prepared.request) {
            var observed = carried(prepared, streamedResponse: false)
            let record = startHop(&observed, submitted: submitted)
            exchange = Exchange(
                request: observed, deadline: deadline, isRedirectHop: isRedirectHop, submitted: submitted, loop: loop,
                record: record)
        } else {
            exchange = Exchange(
                request: carried(prepared, streamedResponse: false), deadline: deadline, isRedirectHop: isRedirectHop,
                submitted: submitted, loop: loop)
        }
        return try await exchange.submitAndWait().get()
    }

    /// Parses a URL for a redirect hop through the session's cache.
    func parse(_ url: String) -> ParsedURL? {
        guard case .success(let parsed) = urls.parsed(url) else { return nil }
        return parsed
    }

    /// The request with the fields this session adds: `User-Agent` and `Accept-Encoding` (first, as
    /// sent) unless the request sets them, and `Expect: 100-continue` for bodies of at least
    /// ``SessionConfiguration/expectContinueThreshold`` bytes.
    public func wireRequest(for request: TransportRequest) async -> TransportRequest {
        defaultFields.applied(to: request.compressionFieldShown)
    }

    /// The request as sent when its response is streamed: the same as ``wireRequest(for:)``, since every
    /// response is offered the codings the engine decodes (`deflate, gzip`).
    public func wireRequest(forStreamed request: TransportRequest) async -> TransportRequest {
        defaultFields.applied(to: request.compressionFieldShown)
    }

    /// Cancels every transfer in flight and every queued request, stops the event loop and joins its thread.
    public func shutdown() async {
        await loop.shutdown()
        if markStopped() { loop.join() }
    }

    /// Like ``shutdown()``, for code that cannot await; blocks until the loop thread has exited.
    public func syncShutdown() {
        loop.requestShutdown()
        if markStopped() { loop.join() }
    }

    /// Returns true the first time only.
    private func markStopped() -> Bool {
        stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
    }

    /// A snapshot of the engine's counters.
    public var statistics: SessionStatistics {
        let counters = loop.counters
        return SessionStatistics(
            activeTransfers: counters.activeTransfers.load(ordering: .relaxed),
            queuedTransfers: counters.queuedTransfers.load(ordering: .relaxed),
            openConnections: counters.openConnections.load(ordering: .relaxed),
            peakOpenConnections: counters.peakOpenConnections.load(ordering: .relaxed),
            pooledHandles: counters.pooledHandles.load(ordering: .relaxed),
            handlesCreated: counters.handlesCreated.load(ordering: .relaxed),
            bufferedBytes: counters.bufferedBytes.load(ordering: .relaxed),
            peakBufferedBytes: counters.peakBufferedBytes.load(ordering: .relaxed),
            largestTransferBuffer: counters.largestTransferBuffer.load(ordering: .relaxed),
            completedTransfers: counters.completedTransfers.load(ordering: .relaxed),
            failedTransfers: counters.failedTransfers.load(ordering: .relaxed),
            cancelledTransfers: counters.cancelledTransfers.load(ordering: .relaxed),
            connectionsOpened: counters.connectionsOpened.load(ordering: .relaxed),
            socketsWatched: counters.socketsWatched.load(ordering: .relaxed),
            epollControlCalls: counters.epollControlCalls.load(ordering: .relaxed),
            loopCPUTime: loop.cpuTime
        )
    }

    /// Per-host figures: queued and running requests, open and peak connections, for every host the
    /// session has connected to or has work for. Answered by the loop thread.
    public func hostStatistics() async -> [HostStatistics] {
        await loop.hostStatistics()
    }

    /// Every cookie in the session's jar that has not expired (empty without a jar: see
    /// ``SessionConfiguration/cookies``).
    public func cookies() async -> [Cookie] {
        await loop.cookies(.list)
    }

    /// Adds cookies to the jar, replacing any with the same name, domain and path.
    public func storeCookies(_ cookies: [Cookie]) async {
        _ = await loop.cookies(.store(cookies))
    }

    /// Empties the jar.
    public func clearCookies() async {
        _ = await loop.cookies(.clear)
    }

    /// Writes a file jar (``CookieStorage/file(_:)``) to its file now; it is also written at shutdown.
    public func flushCookies() async {
        _ = await loop.cookies(.flush)
    }

    /// The loop thread's kernel thread id (0 until it has started); lets tests see the thread exit.
    var loopThreadID: Int32 { loop.kernelThreadID.load(ordering: .relaxed) }

    /// The libcurl build in use, e.g. `libcurl/8.5.0 OpenSSL/3.0.13 zlib/1.3 brotli/1.1.0 zstd/1.5.5`.
    public static var curlVersion: String { Libcurl.loaded.summary }

    /// The libcurl library sessions run on: its version and what it was built with.
    public static var libcurl: Libcurl { .loaded }

    /// The system trust store sessions use for ``TrustRoots/system``: found by Curlew from
    /// `SSL_CERT_FILE`, `SSL_CERT_DIR` and the distributions' known locations, not from the path compiled
    /// into libcurl.
    public static var systemTrustStore: SystemTrustStore { .current }
}
