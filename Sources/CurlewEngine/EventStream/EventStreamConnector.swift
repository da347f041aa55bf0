// Curlew — how an event stream opens its connections (a session's, or a provider's chain), and the
// request each attempt sends.

import HTTPTypes

/// Opens an event stream's connection attempts, one at a time; the reader decides what to do with
/// each attempt's head, body and failure.
package struct EventStreamConnector: Sendable {
    /// Opens attempt `attempt` (0: the first), resuming after `lastEventID` ("" when none): returns its
    /// final head and its body, detached from the call that opened it (dropping the body ends the attempt).
    package var connect: @Sendable (_ attempt: Int, _ lastEventID: String) async throws -> OpenedAttempt
    /// The transport failure inside an error `connect` threw, if any: only those may be reconnected
    /// after.
    package var transportError: @Sendable (any Error) -> TransportError?
    /// Whether the stream may reconnect at all (a stubbed one may not).
    package var mayReconnect: Bool
    /// Starts an attempt whose request is submitted synchronously and whose redirects the reader follows
    /// (a session's), when the connector can (nil from the closure: this attempt needs `connect`).
    package var direct: (@Sendable (_ attempt: Int, _ lastEventID: String) throws -> sending EventStreamExchange?)?
    /// Told of the final head of each attempt started by ``direct`` and of the request that got it (an
    /// attempt through ``connect`` sees its own).
    package var sawDirectHead: (@Sendable (_ head: ResponseHead, _ request: TransportRequest) -> Void)?

    package init(
        mayReconnect: Bool = true,
        transportError: @escaping @Sendable (any Error) -> TransportError? = { $0 as? TransportError },
        direct: (@Sendable (_ attempt: Int, _ lastEventID: String) throws -> sending EventStreamExchange?)? = nil,
        sawDirectHead: (@Sendable (_ head: ResponseHead, _ request: TransportRequest) -> Void)? = nil,
        connect: @escaping @Sendable (_ attempt: Int, _ lastEventID: String) async throws -> OpenedAttempt
    ) {
        self.connect = connect
        self.transportError = transportError
        self.mayReconnect = mayReconnect
        self.direct = direct
        self.sawDirectHead = sawDirectHead
    }
}

/// An attempt the connector opened: its final head, and its body detached from the call that opened it.
/// One reference: the calls it passes through while the attempt opens keep a pointer, not the head.
package final class OpenedAttempt: Sendable {
    package let head: ResponseHead
    package let body: DetachedResponseBody

    package init(head: ResponseHead, body: DetachedResponseBody) {
        self.head = head
        self.body = body
    }
}

/// The request of one connection attempt.
package enum EventStreamRequest {
    /// `request` as an event stream's attempt sends it: `Accept: text/event-stream` unless it names
    /// another, `Cache-Control: no-cache`, `Last-Event-ID` when there is one, the policy's idle timeout
    /// unless the request sets its own, and the smaller receive buffer of event streams.
    package static func prepare(
        _ request: TransportRequest, lastEventID: String, policy: EventStreamPolicy
    ) -> TransportRequest {
        var request = request
        if request.headerFields[.accept] == nil { request.headerFields[.accept] = "text/event-stream" }
        if request.headerFields[.cacheControl] == nil { request.headerFields[.cacheControl] = "no-cache" }
        // The specification sends the id only when it is not empty; one with CR, LF or NUL could not
        // have come from a parsed stream (the line ends split it), but a caller's could.
        if !lastEventID.isEmpty, !lastEventID.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) {
            request.headerFields[lastEventIDField] = lastEventID
        }
        request.options = request.options.forEventStream(idleTimeout: policy.idleTimeout)
        return request
    }

    /// The `Last-Event-ID` request field.
    package static let lastEventIDField = HTTPField.Name("Last-Event-ID")!

    /// Whether `head` is what an event stream needs to be read: 200 with a `text/event-stream` body
    /// (the MIME type's essence, compared case-insensitively).
    package static func isEventStream(_ head: ResponseHead) -> Bool {
        head.status.code == 200 && isEventStreamType(head.headerFields[.contentType])
    }

    /// Whether a `Content-Type` value's essence is `text/event-stream`.
    package static func isEventStreamType(_ value: String?) -> Bool {
        guard let value else { return false }
        let essence = value.utf8.split(separator: UInt8(ascii: ";"), maxSplits: 1, omittingEmptySubsequences: false).first
        guard let essence, let text = String(essence) else { return false }
        return text.trimmingWhitespace.lowercased() == "text/event-stream"
    }
}
