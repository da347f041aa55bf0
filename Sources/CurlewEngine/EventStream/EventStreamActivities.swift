// Curlew — an event stream read with its comments and reconnections between its events.

/// An event stream's activity: ``EventStreamActivity`` values in order — its events, comment lines and
/// reconnections — reading the stream as iterating its events does. Made by
/// ``ServerSentEvents/activity`` (`Failure` is ``EventStreamError``) and by a provider's target events
/// (`CurlewError`).
public struct EventStreamActivities<Failure: Error>: AsyncSequence, Sendable {
    public typealias Element = EventStreamActivity

    let connector: EventStreamConnector
    let policy: EventStreamPolicy
    let lastEventID: String
    let closer: EventStreamCloser
    /// What the stream's failures are thrown as.
    let failure: @Sendable (any Error) -> Failure

    package init(
        connector: EventStreamConnector, policy: EventStreamPolicy, lastEventID: String, closer: EventStreamCloser,
        failure: @escaping @Sendable (any Error) -> Failure
    ) {
        self.connector = connector
        self.policy = policy
        self.lastEventID = lastEventID
        self.closer = closer
        self.failure = failure
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(
            reader: EventStreamReader(
                connector: connector, policy: policy, lastEventID: lastEventID, closer: closer, observes: true),
            failure: failure)
    }

    /// Ends the stream from any task, as the events' sequence's `close()` does (they share it).
    public func close() { closer.close() }

    /// Reads the stream's activity, reconnecting as the events' iterator does.
    public struct Iterator: AsyncIteratorProtocol {
        let reader: EventStreamReader
        let failure: @Sendable (any Error) -> Failure

        /// The id sent as `Last-Event-ID` if the stream reconnected now.
        public var lastEventID: String { reader.lastEventID }
        /// The wait before a reconnection as it stands: the server's last `retry`, else the policy's time
        /// (a failed attempt adds the backoff; ``EventStreamReconnection/delay`` says the wait made).
        public var reconnectionTime: Duration { reader.reconnectionTime }

        /// The next activity; nil when the stream has ended and does not reconnect. Throws what the
        /// events' iterator throws.
        public mutating func next() async throws(Failure) -> EventStreamActivity? {
            do {
                return try await reader.nextActivity()
            } catch {
                throw failure(error)
            }
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Failure) -> EventStreamActivity? {
            do {
                return try await reader.nextActivity()
            } catch {
                throw failure(error)
            }
        }
    }
}
