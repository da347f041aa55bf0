// Curlew — a target's server-sent events as an AsyncSequence that throws `CurlewError`.

/// The events of a target's event stream, in order, across reconnections; made by
/// ``Provider/events(for:lastEventID:policy:reconnectTarget:)``.
///
/// Each iteration opens its own connection when it asks for its first event; events are parsed on the
/// iterating task. Leaving the loop or cancelling the task closes the connection at once (cancellation
/// throws ``CurlewError/transport(_:)`` with the code ``/CurlewEngine/TransportError/Code-swift.struct/cancelled``).
public struct TargetEvents: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent
    public typealias Failure = CurlewError

    let connector: EventStreamConnector
    let policy: EventStreamPolicy
    let lastEventID: String

    public func makeAsyncIterator() -> Iterator {
        Iterator(reader: EventStreamReader(connector: connector, policy: policy, lastEventID: lastEventID))
    }

    /// Reads the events, reconnecting when the stream ends or its connection fails.
    public struct Iterator: AsyncIteratorProtocol {
        let reader: EventStreamReader

        /// The id sent as `Last-Event-ID` if the stream reconnected now.
        public var lastEventID: String { reader.lastEventID }

        /// The next event; nil when the stream has ended and does not reconnect.
        ///
        /// - Throws: ``CurlewError/eventStream(_:)`` when the server's answer or a limit ended the stream,
        ///   ``CurlewError/transport(_:)`` for a transport failure not reconnected after (cancellation
        ///   too), and what the provider's stages threw for an attempt (a request closure, a plugin).
        public mutating func next() async throws(CurlewError) -> ServerSentEvent? {
            if let event = reader.buffered() { return event }
            do {
                return try await reader.next()
            } catch {
                throw Self.curlewError(error)
            }
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CurlewError) -> ServerSentEvent? {
            if let event = reader.buffered() { return event }
            do {
                return try await reader.next()
            } catch {
                throw Self.curlewError(error)
            }
        }

        static func curlewError(_ error: any Error) -> CurlewError {
            switch error {
            case let error as CurlewError: error
            case EventStreamError.transport(let transport): .transport(transport)
            case let error as EventStreamError: .eventStream(error)
            case let error as TransportError: .transport(error)
            default: .underlying(error, nil)
            }
        }
    }
}
