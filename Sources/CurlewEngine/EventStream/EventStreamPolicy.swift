// Curlew — how an event stream reconnects, how long it may stay quiet, and how large its lines may be.

/// How a stream of server-sent events reconnects and what it tolerates.
///
/// The defaults follow the WHATWG specification: reconnect after the stream ends or the connection
/// fails, after the server's `retry` time (else ``reconnectionTime``), sending `Last-Event-ID`; stop on a
/// 204, on any status but 200 and on a content type other than `text/event-stream`.
public struct EventStreamPolicy: Sendable, Hashable {
    /// Whether the stream reconnects after it ends or its connection fails. Default true; when false,
    /// a stream that ends cleanly ends the sequence, and a failure is thrown.
    public var reconnects: Bool
    /// The wait before reconnecting until the server sends a `retry` field. Default 3 s.
    public var reconnectionTime: Duration
    /// Added to the reconnection time after consecutive failed attempts (a connection that could not be
    /// made, a retryable status, a connection lost before its first byte), forgotten after a healthy
    /// period. Default: 1 s doubling to 30 s, full jitter, reset after 30 s of a working stream.
    public var backoff: Backoff
    /// Consecutive failed attempts after which the last failure is thrown; nil reconnects for ever.
    public var maxConsecutiveFailures: Int?
    /// Statuses after which the stream reconnects (honouring `Retry-After`) instead of failing. Default
    /// none, as the specification says; ``overloadStatuses`` lists the usual choice.
    public var retryableStatuses: Set<Int>
    /// How long a connection may receive nothing (comments count) before it is dropped and the stream
    /// reconnects. A request's own ``TransferOptions/idleTimeout`` wins. Default 120 s: servers that
    /// send keep-alive comments send them every 15 to 30 s, and a language model may pause for tens of
    /// seconds before its next token; two minutes finds a dead connection without cutting those off.
    public var idleTimeout: Duration?
    /// The longest line other than a `data` line accepted (`event`, `id`, `retry`, comments, unknown
    /// fields), in bytes; a longer one fails the stream with ``EventStreamError/lineTooLong(limit:)``.
    /// Default 1 MiB. It bounds what the parser buffers for lines whose values are small by nature.
    public var maxLineLength: Int
    /// The most data one event may carry, in bytes (its `data` values joined with LF, however many lines
    /// they take); more fails the stream with ``EventStreamError/eventTooLarge(limit:)``. Default 16 MiB,
    /// which admits the largest payloads event-stream services send (1 MiB and more in one `data` line).
    public var maxEventSize: Int

    /// 429, 502, 503 and 504: the statuses of a server or proxy that is overloaded or restarting.
    public static let overloadStatuses: Set<Int> = [429, 502, 503, 504]

    /// A policy; every parameter has the default described on its property.
    public init(
        reconnects: Bool = true, reconnectionTime: Duration = .seconds(3),
        backoff: Backoff = Backoff(base: .seconds(1), cap: .seconds(30), resetAfter: .seconds(30)),
        maxConsecutiveFailures: Int? = nil, retryableStatuses: Set<Int> = [], idleTimeout: Duration? = .seconds(120),
        maxLineLength: Int = EventStreamParser.defaultMaxLineLength,
        maxEventSize: Int = EventStreamParser.defaultMaxEventSize
    ) {
        self.reconnects = reconnects
        self.reconnectionTime = max(reconnectionTime, .zero)
        self.backoff = backoff
        self.maxConsecutiveFailures = maxConsecutiveFailures.map { max($0, 1) }
        self.retryableStatuses = retryableStatuses
        self.idleTimeout = idleTimeout
        self.maxLineLength = max(maxLineLength, 1)
        self.maxEventSize = max(maxEventSize, 1)
    }

    /// The defaults.
    public static let `default` = EventStreamPolicy()
}
