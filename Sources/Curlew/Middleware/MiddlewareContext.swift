// Curlew — what a middleware knows about the exchange besides the request.

import CurlewEngine
import HTTPTypes
import Logging

/// What a ``TransportMiddleware`` is told about the exchange it wraps.
///
/// A value: a middleware changes its copy (the attempt number, say) and hands it to `next`.
public struct MiddlewareContext: Sendable {
    /// The target the request was built for, when the chain runs for a ``Provider``.
    public var target: (any TargetType)?
    /// The endpoint the request was built from, when the chain runs for a ``Provider``.
    public var endpoint: Endpoint?
    /// The attempt this exchange is: 1 for the first, incremented by each middleware that sends the
    /// request again (a retry, a replay after a new credential).
    public var attempt: Int
    /// Where middleware log. In a provider's chain, the provider's logger with the call's
    /// `curlew.request.id`, `http.request.method` and `url.full` (no user information, query values
    /// redacted) as metadata, and `curlew.operation` when the call names one. Setting it replaces the
    /// logger the metadata is added to.
    public var logger: Logger {
        get {
            guard let call, let line else { return baseLogger }
            var logger = baseLogger
            logger[metadataKey: "curlew.request.id"] = "\(call.id)"
            if let operation = call.operation { logger[metadataKey: "curlew.operation"] = "\(operation)" }
            logger[metadataKey: "http.request.method"] = "\(line.method.rawValue)"
            logger[metadataKey: "url.full"] = "\(RedactedURL.full(line.url))"
            return logger
        }
        set { baseLogger = newValue }
    }
    private var baseLogger: Logger
    /// The call the exchange belongs to, and the first request's method and URL (for the logger's metadata).
    var call: CallContext?
    private var line: (method: HTTPRequest.Method, url: String)?
    /// Where Curlew's own counters go (retries, refreshes); nil when the session records no metrics.
    var metrics: ClientMetrics?
    /// Whether the caller reads the whole body into memory (``Provider/request(_:)``) rather than as it
    /// arrives (``Provider/stream(_:isolation:_:)``). Only such exchanges are shared by in-flight
    /// sharing, and the transport then collects the body itself.
    public internal(set) var collectsBody: Bool
    /// For an event stream's connection attempts, which reconnection this is: 0 for the first
    /// connection (and for every exchange that is not an event stream). The stream reconnects on its
    /// own, so ``RetryMiddleware`` passes reconnections through untouched.
    public internal(set) var reconnection = 0
    /// How the stub member answers (``StubBehavior/never``: it passes the exchange on).
    var stub: StubBehavior

    /// A context for a chain called outside a provider.
    public init(attempt: Int = 1, logger: Logger = MiddlewareContext.defaultLogger) {
        self.attempt = attempt
        baseLogger = logger
        collectsBody = false
        stub = .never
    }

    /// A context for a chain called outside a provider for `request`, whose call (``/CurlewEngine/TransportRequest/call``)
    /// and first line its logger's metadata shows, counting retries in `metrics` (an OpenAPI transport's);
    /// `collectsBody`: the transport collects the response before handing it out.
    package init(request: TransportRequest, logger: Logger, metrics: ClientMetrics?, collectsBody: Bool) {
        attempt = 1
        baseLogger = logger
        call = request.call
        line = (request.method, request.url)
        self.metrics = metrics
        self.collectsBody = collectsBody
        stub = .never
    }

    init(
        target: any TargetType, endpoint: Endpoint, logger: Logger, collectsBody: Bool, stub: StubBehavior,
        request: TransportRequest, metrics: ClientMetrics?
    ) {
        self.init(request: request, logger: logger, metrics: metrics, collectsBody: collectsBody)
        self.target = target
        self.endpoint = endpoint
        self.stub = stub
    }

    /// The logger contexts get when none is given: label `curlew`.
    public static let defaultLogger = Logger(label: "curlew")
}
