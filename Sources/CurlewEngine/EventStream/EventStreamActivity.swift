// Curlew — what an observed event stream reports besides its events: comments and reconnections.

/// One thing an event stream did, as ``ServerSentEvents/activity`` reports it: an event, a comment, or a
/// reconnection about to happen.
public enum EventStreamActivity: Sendable, Hashable {
    /// An event, as iterating the stream itself yields it.
    case event(ServerSentEvents.Event)
    /// A comment line (one starting with `:`): the text after the colon, as UTF-8. Servers send them to
    /// keep a connection alive; the standard ignores them.
    case comment(String)
    /// The stream is about to wait and reconnect.
    case reconnecting(EventStreamReconnection)
}

/// A reconnection the stream is about to make, and why.
public struct EventStreamReconnection: Sendable, Hashable {
    /// Why the stream reconnects.
    public enum Cause: Sendable, Hashable {
        /// The server ended the body cleanly.
        case streamEnded
        /// The connection failed (closed, reset, timed out, refused …).
        case transportFailure(TransportError)
        /// The server answered a status the policy retries (``EventStreamPolicy/retryableStatuses``).
        case status(Int)
    }

    /// Why the stream reconnects.
    public var cause: Cause
    /// How long the stream waits before the attempt: the server's `retry` (else the policy's time), plus
    /// the backoff after a failed attempt, or the server's `Retry-After`.
    public var delay: Duration
    /// The attempt about to be made: 1 for the first reconnection.
    public var attempt: Int
    /// The id the attempt sends as `Last-Event-ID` ("" for none).
    public var lastEventID: String

    /// A reconnection.
    public init(cause: Cause, delay: Duration, attempt: Int, lastEventID: String) {
        self.cause = cause
        self.delay = delay
        self.attempt = attempt
        self.lastEventID = lastEventID
    }
}
