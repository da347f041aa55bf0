// Curlew — why an event stream ended with an error.

/// Why an event stream failed: its bytes broke a parser limit, or the server's answer was not an event
/// stream, or the transport failed and was not reconnected.
public enum EventStreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A line other than a `data` line (without its terminator) was longer than this many bytes
    /// (``EventStreamParser``'s `maxLineLength`). The parser refuses further bytes until ``EventStreamParser/finish()``.
    case lineTooLong(limit: Int)
    /// An event's data (its `data` values joined with LF) grew beyond this many bytes
    /// (``EventStreamParser``'s `maxEventSize`). The parser refuses further bytes until
    /// ``EventStreamParser/finish()``.
    case eventTooLarge(limit: Int)
    /// The server answered 204 No Content, which asks the client not to reconnect.
    case noContent
    /// The server answered with this status, which is not 200 (and not one the policy retries, or the
    /// policy gave up retrying it).
    case unexpectedStatus(Int)
    /// The server answered 200 with this `Content-Type` (`nil` when it sent none), whose essence is not
    /// `text/event-stream`.
    case unexpectedContentType(String?)
    /// A reconnection would send the request body again, and the body is a stream that cannot be.
    case bodyNotReplayable
    /// The transport failed and the failure was not reconnected after; a cancelled iterating task gives
    /// a ``TransportError`` whose code is ``TransportError/Code/cancelled``.
    case transport(TransportError)

    /// True when the task reading the stream was cancelled (`.transport` with the code
    /// ``TransportError/Code-swift.struct/cancelled``).
    public var isCancellation: Bool {
        if case .transport(let error) = self { return error.code == .cancelled }
        return false
    }

    public var description: String {
        switch self {
        case .lineTooLong(let limit): "an event-stream line is longer than \(limit) bytes"
        case .eventTooLarge(let limit): "an event's data is larger than \(limit) bytes"
        case .noContent: "the server answered 204 No Content: the event stream ends and is not reconnected"
        case .unexpectedStatus(let status): "the server answered status \(status) instead of 200 with an event stream"
        case .unexpectedContentType(let type?):
            "the server answered 200 with Content-Type \"\(type)\" instead of text/event-stream"
        case .unexpectedContentType(nil): "the server answered 200 without a Content-Type instead of text/event-stream"
        case .bodyNotReplayable: "the event stream cannot reconnect: the request's streamed body cannot be sent again"
        case .transport(let error): "the event stream failed: \(error)"
        }
    }
}
