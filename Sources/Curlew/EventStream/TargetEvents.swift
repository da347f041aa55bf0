// Curlew — a target's server-sent events as an AsyncSequence that throws `CurlewError`.

/// The events of a target's event stream, in order, across reconnections; made by
/// ``Provider/events(for:lastEventID:policy:reconnectTarget:)``.
///
/// Each iteration opens its own connection when it asks for its first event; events are parsed on the
/// iterating task. Leaving the loop or cancelling the task closes the connection at once; ``close()``
/// ends the stream from any other task.
///
/// Every failure of the stream itself is ``CurlewError/eventStream(_:)`` carrying the same
/// ``/CurlewEngine/EventStreamError`` a session's stream throws: a transport failure not reconnected
/// after, cancellation included, is `.eventStream(.transport(error))` (``CurlewError/isCancellation``
/// is true for a cancelled one). What the provider's own stages throw for an attempt (a request closure,
/// a plugin) comes as they threw it.
public struct TargetEvents: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvents.Event
    public typealias Failure = CurlewError

    let connector: EventStreamConnector
    let policy: EventStreamPolicy
    let lastEventID: String
    let closer = EventStreamCloser()

    public func makeAsyncIterator() -> Iterator {
        Iterator(reader: EventStreamReader(connector: connector, policy: policy, lastEventID: lastEventID, closer: closer))
    }

    /// Ends the stream from any task: an iteration waiting for its next event returns nil and its
    /// connection closes at once; iterations started later end at once. Copies of this sequence share it.
    public func close() { closer.close() }

    /// The stream with its comments and reconnections between its events (see
    /// ``/CurlewEngine/ServerSentEvents/activity``); failures are thrown as ``Iterator/next()`` throws them.
    public var activity: EventStreamActivities<CurlewError> {
        EventStreamActivities(
            connector: connector, policy: policy, lastEventID: lastEventID, closer: closer, failure: Iterator.curlewError)
    }

    /// Reads the events, reconnecting when the stream ends or its connection fails.
    public struct Iterator: AsyncIteratorProtocol {
        let reader: EventStreamReader

        /// The id sent as `Last-Event-ID` if the stream reconnected now.
        public var lastEventID: String { reader.lastEventID }
        /// The wait before a reconnection as it stands: the server's last `retry`, else the policy's time
        /// (a failed attempt adds the backoff).
        public var reconnectionTime: Duration { reader.reconnectionTime }

        /// The next event; nil when the stream has ended and does not reconnect.
        ///
        /// - Throws: ``CurlewError/eventStream(_:)`` for every failure of the stream itself (the server's
        ///   answer, a limit, a transport failure not reconnected after, cancellation), and what the
        ///   provider's stages threw for an attempt (a request closure, a plugin).
        public mutating func next() async throws(CurlewError) -> ServerSentEvents.Event? {
            if let event = reader.buffered() { return event }
            do {
                return try await reader.next()
            } catch {
                throw Self.curlewError(error)
            }
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CurlewError) -> ServerSentEvents.Event? {
            if let event = reader.buffered() { return event }
            do {
                return try await reader.next()
            } catch {
                throw Self.curlewError(error)
            }
        }

        /// One shape for the stream's own failures, the session's: `.eventStream(EventStreamError)` (the
        /// reader wraps every transport failure in it); the stages' own failures as they threw them.
        static func curlewError(_ error: any Error) -> CurlewError {
            CurlewError(mapping: error)
        }
    }
}
