// Curlew — what a call tells the engine about itself, for the logs, metrics and spans of its requests.

import HTTPTypes
public import Logging
import Synchronization

/// The call a request belongs to, as its log lines, metrics and spans see it: the caller's logger, an id
/// for the call, which attempt this request is, and the operation's name.
///
/// A provider sets one on every request it sends (``TransportRequest/call``); set one yourself when you
/// call a session directly and want its log lines in your logger.
public final class CallContext: Sendable {
    /// The caller's logger; ``TransportRequest/logger`` adds the request's metadata to it.
    public let logger: Logger
    /// An id for the call, the same for its attempts and redirect hops (`curlew.request.id` in log
    /// metadata).
    public let id: UInt64
    /// Which attempt the request is: 1 for the first, 2 for the first retry, and so on.
    public let attempt: Int
    /// The operation's name (a target's, an OpenAPI operation's id), for logs and spans.
    public let operation: String?
    /// Whether the logger takes debug lines, read once: the engine asks for every request it sends.
    let logsHops: Bool

    /// A context for one attempt of a call.
    ///
    /// - Parameters:
    ///   - logger: Where the request's log lines go.
    ///   - id: The call's id; nil takes the next of the process's.
    ///   - attempt: Which attempt the request is, 1 for the first.
    ///   - operation: The operation's name, if it has one.
    public init(logger: Logger, id: UInt64? = nil, attempt: Int = 1, operation: String? = nil) {
        self.logger = logger
        self.id = id ?? Self.nextID()
        self.attempt = max(1, attempt)
        self.operation = operation
        logsHops = logger.logLevel <= .debug
    }

    private static let ids = Atomic<UInt64>(0)

    /// A new call id, unique in the process.
    public static func nextID() -> UInt64 {
        ids.wrappingAdd(1, ordering: .relaxed).newValue
    }
}

extension TransportRequest {
    /// The logger for this request's lines: the call's (``call``), else the default engine logger, with
    /// `curlew.request.id`, `http.request.method` and `url.full` (without user information, query values
    /// redacted) as metadata.
    public var logger: Logger { logger(orElse: Logger(label: "curlew.engine")) }

    /// ``logger``, with `fallback` in place of the default engine logger when the request has no call.
    func logger(orElse fallback: @autoclosure () -> Logger) -> Logger {
        var logger = call?.logger ?? fallback()
        if let call {
            logger[metadataKey: "curlew.request.id"] = "\(call.id)"
            if let operation = call.operation { logger[metadataKey: "curlew.operation"] = "\(operation)" }
        }
        logger[metadataKey: "http.request.method"] = "\(method.rawValue)"
        logger[metadataKey: "url.full"] = "\(RedactedURL.full(url))"
        return logger
    }
}
