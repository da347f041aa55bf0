// Curlew — which exchanges a RetryMiddleware sends again, how often and how soon.

public import HTTPTypes

/// What a ``RetryMiddleware`` retries, and how.
///
/// A request is retried only when its method is in ``methods`` (idempotent methods by default) or it
/// opts in (``optInField``, an `Idempotency-Key` by default), and its body can be replayed. Then:
/// - a response whose status is in ``statuses`` is retried, after its `Retry-After` (seconds or an
///   HTTP date) when it has one, else after the ``backoff``;
/// - a transport error that proves the request was not processed is retried: DNS, connect (and a
///   connect timeout), a failed TLS handshake, and an HTTP/2 connection that failed before any response
///   byte (libcurl reports a GOAWAY that leaves the stream unprocessed so);
/// - a connection closed or reset before any response byte is retried only for idempotent methods and
///   opted-in requests (the server may have processed the request).
///
/// Nothing else is retried: not cancellation, not other timeouts, not a certificate failure.
public struct RetryPolicy: Sendable {
    /// Most attempts, the first included (default 3).
    public var maxAttempts: Int
    /// The methods retried without opting in (default ``idempotentMethods``).
    public var methods: Set<HTTPRequest.Method>
    /// A request carrying this header field opts in to retries whatever its method (default
    /// `Idempotency-Key`); nil: only ``methods`` are retried.
    public var optInField: HTTPField.Name?
    /// The statuses retried (default 408, 429, 500, 502, 503, 504).
    public var statuses: Set<Int>
    /// The waits between attempts without a `Retry-After`.
    public var backoff: Backoff
    /// The longest `Retry-After` honoured: a response that asks for a longer wait is returned as it is.
    public var maxRetryAfter: Duration
    /// The deadline for all attempts together, waits included, when the request has no total timeout of
    /// its own (``/CurlewEngine/TransportRequest/timeout``, which otherwise spans all attempts); nil:
    /// each attempt has the session's total timeout.
    public var totalTimeout: Duration?

    /// GET, HEAD, OPTIONS, PUT, DELETE and TRACE: the idempotent methods of RFC 9110 §9.2.2.
    public static let idempotentMethods: Set<HTTPRequest.Method> = [.get, .head, .options, .put, .delete, .trace]
    /// 408, 429, 500, 502, 503 and 504.
    public static let transientStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// A policy; every parameter has the default described on its property.
    public init(
        maxAttempts: Int = 3, methods: Set<HTTPRequest.Method> = RetryPolicy.idempotentMethods,
        optInField: HTTPField.Name? = HTTPField.Name("Idempotency-Key"), statuses: Set<Int> = RetryPolicy.transientStatuses,
        backoff: Backoff = .default, maxRetryAfter: Duration = .seconds(60), totalTimeout: Duration? = nil
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.methods = methods
        self.optInField = optInField
        self.statuses = statuses
        self.backoff = backoff
        self.maxRetryAfter = maxRetryAfter
        self.totalTimeout = totalTimeout
    }

    /// The defaults.
    public static let `default` = RetryPolicy()

    /// Whether the request opted in with ``optInField``.
    func optsIn(_ request: TransportRequest) -> Bool {
        guard let optInField else { return false }
        return request.headerFields[optInField] != nil
    }

    /// Whether the request may be retried at all: a retried method or an opt-in, and a body that can be
    /// sent again.
    func mayRetry(_ request: TransportRequest) -> Bool {
        retriesMethod(of: request) && request.body?.isReplayable ?? true
    }

    /// Whether the request's method is retried, or the request opted in.
    func retriesMethod(of request: TransportRequest) -> Bool {
        methods.contains(request.method) || optsIn(request)
    }

    /// Whether `error` allows another attempt of `request` (which ``mayRetry(_:)`` allowed).
    func retries(_ error: TransportError, of request: TransportRequest) -> Bool {
        if Self.provesNotProcessed(error) { return true }
        guard Self.closedBeforeResponse(error) else { return false }
        return Self.idempotentMethods.contains(request.method) || optsIn(request)
    }

    /// The failures after which the server cannot have processed the request.
    static func provesNotProcessed(_ error: TransportError) -> Bool {
        switch error.code {
        case .dnsFailure, .cannotConnect: true
        case .timedOut: error.timeout == .connect
        // A handshake that failed; a certificate that does not verify fails the same way every time.
        case .tlsFailure: error.tlsReason == .handshakeFailed
        // libcurl reports CURLE_HTTP2 when a GOAWAY ends the session while this stream, above the
        // last stream id, was closed unprocessed (nghttp2 closes it as REFUSED_STREAM); a response byte
        // would mean the server had taken the stream.
        case .http2ConnectionFailed: !error.responseBytesReceived
        default: false
        }
    }

    /// A connection that ended before any response byte: the request may or may not have been processed.
    static func closedBeforeResponse(_ error: TransportError) -> Bool {
        (error.code == .connectionClosed || error.code == .connectionReset) && !error.responseBytesReceived
    }
}
