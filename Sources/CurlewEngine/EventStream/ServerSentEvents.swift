// Curlew — a request's server-sent events as an AsyncSequence, reconnecting as the specification says.

/// The events of an event stream, in order, across reconnections.
///
/// Made by ``CurlSession/events(for:lastEventID:policy:reconnectRequest:)``. Each iteration opens its
/// own connection when it asks for its first event; events are parsed on the iterating task. Ending
/// the iteration early (leaving the loop) or cancelling the iterating task closes the connection at
/// once; cancellation throws ``EventStreamError/transport(_:)`` with the code
/// ``TransportError/Code-swift.struct/cancelled``. ``close()`` ends the stream from any other task.
///
/// Iterating yields events only. ``activity`` reports the same stream with its comments and
/// reconnections (their cause and delay) between the events.
public struct ServerSentEvents: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvents.Event
    public typealias Failure = EventStreamError

    let connector: EventStreamConnector
    let policy: EventStreamPolicy
    let lastEventID: String
    let closer = EventStreamCloser()

    package init(connector: EventStreamConnector, policy: EventStreamPolicy, lastEventID: String) {
        self.connector = connector
        self.policy = policy
        self.lastEventID = lastEventID
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(reader: EventStreamReader(connector: connector, policy: policy, lastEventID: lastEventID, closer: closer))
    }

    /// Ends the stream from any task: an iteration waiting for its next event returns nil and its
    /// connection closes at once (during a reconnection wait, the wait ends); iterations started later
    /// end at once. Copies of this sequence share it.
    public func close() { closer.close() }

    /// The stream with its comments and reconnections between its events (LaunchDarkly's "comments"
    /// capability, and what a dashboard shows of a stream's health). Iterating it reads the stream as
    /// iterating the events does; ``close()`` ends it too.
    public var activity: EventStreamActivities<EventStreamError> {
        EventStreamActivities(
            connector: connector, policy: policy, lastEventID: lastEventID, closer: closer,
            failure: Iterator.eventStreamError)
    }

    /// Reads the events, reconnecting when the stream ends or its connection fails.
    public struct Iterator: AsyncIteratorProtocol {
        let reader: EventStreamReader

        /// The id sent as `Last-Event-ID` if the stream reconnected now: the last `id` field's value.
        public var lastEventID: String { reader.lastEventID }
        /// The wait before a reconnection as it stands: the server's last `retry`, else the policy's time
        /// (a failed attempt adds the backoff).
        public var reconnectionTime: Duration { reader.reconnectionTime }

        /// The next event; nil when the stream has ended and does not reconnect.
        ///
        /// - Throws: ``EventStreamError``: the server's answer ended the stream (204, another status or
        ///   content type), a line or event was too large, or a transport failure was not reconnected
        ///   after (including cancellation).
        public mutating func next() async throws(EventStreamError) -> ServerSentEvents.Event? {
            if let event = reader.buffered() { return event }
            do {
                return try await reader.next()
            } catch {
                throw Self.eventStreamError(error)
            }
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(EventStreamError) -> ServerSentEvents.Event? {
            if let event = reader.buffered() { return event }
            do {
                return try await reader.next()
            } catch {
                throw Self.eventStreamError(error)
            }
        }

        @inline(never)
        static func eventStreamError(_ error: any Error) -> EventStreamError {
            switch error {
            case let error as EventStreamError: error
            case let error as TransportError: .transport(error)
            default: .transport(TransportError(.curl, message: "the event stream failed: \(error)"))
            }
        }
    }
}

extension CurlSession {
    /// The server-sent events of `request`, reconnecting after the stream ends or its connection fails
    /// as the WHATWG specification says.
    ///
    /// Each attempt sends `Accept: text/event-stream` (unless the request names another type),
    /// `Cache-Control: no-cache` and, once an `id` has been received (or `lastEventID` is given),
    /// `Last-Event-ID`. There is no total timeout; the policy's idle timeout drops a connection that
    /// has been silent too long, and the stream reconnects.
    ///
    /// ```swift
    /// for try await event in session.events(for: TransportRequest(url: "https://example.com/feed")) {
    ///     logger.info("\(event.type): \(event.data)")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - request: The first attempt's request.
    ///   - lastEventID: The id to resume after ("" for none).
    ///   - policy: How the stream reconnects and what it tolerates.
    ///   - reconnectRequest: The request of each later attempt, given the last event id; nil sends
    ///     `request` again, which must then have a body that can be sent again
    ///     (``TransportRequest/Body/isReplayable``), else the stream fails with
    ///     ``EventStreamError/bodyNotReplayable``.
    public nonisolated func events(
        for request: TransportRequest, lastEventID: String = "", policy: EventStreamPolicy = .default,
        reconnectRequest: (@Sendable (_ lastEventID: String) -> TransportRequest)? = nil
    ) -> ServerSentEvents {
        // The request of attempt `attempt`.
        let attemptRequest: @Sendable (Int, String) throws -> TransportRequest = { attempt, lastEventID in
            var next = request
            if attempt > 0 {
                if let reconnectRequest {
                    next = reconnectRequest(lastEventID)
                } else if let body = request.body, !body.isReplayable {
                    throw EventStreamError.bodyNotReplayable
                }
            }
            return EventStreamRequest.prepare(next, lastEventID: lastEventID, policy: policy)
        }
        let connector = EventStreamConnector(
            direct: { [self] attempt, lastEventID in
                try startEventStream(try attemptRequest(attempt, lastEventID))
            },
            connect: { [self] attempt, lastEventID in
                let wire = try attemptRequest(attempt, lastEventID)
                return try await perform(wire) { head, body in OpenedAttempt(head: head, body: try body.detach()) }
            })
        return ServerSentEvents(connector: connector, policy: policy, lastEventID: lastEventID)
    }
}
