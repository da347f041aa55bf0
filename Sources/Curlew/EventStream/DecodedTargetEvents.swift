// Curlew — a target's server-sent events with each event's data decoded as a `Decodable` value.

import CurlewJSON

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The events of a target's event stream with their data decoded from JSON; made by
/// ``Provider/events(for:as:decoder:lastEventID:policy:undecodable:reconnectTarget:)``.
public struct DecodedTargetEvents<Value: Decodable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = DecodedEvent<Value>
    public typealias Failure = CurlewError

    let events: TargetEvents
    let decoder: JSONBodyDecoder
    let undecodable: UndecodableEvents
    let attempts: EventStreamAttempts

    public func makeAsyncIterator() -> Iterator {
        Iterator(events: events.makeAsyncIterator(), decoder: decoder, undecodable: undecodable, attempts: attempts)
    }

    /// Ends the stream from any task (see ``TargetEvents/close()``).
    public func close() { events.close() }

    /// The stream with its comments and reconnections between its events, the events undecoded (see
    /// ``TargetEvents/activity``).
    public var activity: EventStreamActivities<CurlewError> { events.activity }

    /// Reads and decodes the events.
    public struct Iterator: AsyncIteratorProtocol {
        var events: TargetEvents.Iterator
        let decoder: JSONBodyDecoder
        let undecodable: UndecodableEvents
        let attempts: EventStreamAttempts
        /// Set once an undecodable event ended the stream.
        var failed = false

        /// The id sent as `Last-Event-ID` if the stream reconnected now.
        public var lastEventID: String { events.lastEventID }
        /// The wait before a reconnection as it stands (see ``TargetEvents/Iterator/reconnectionTime``).
        public var reconnectionTime: Duration { events.reconnectionTime }

        /// The next event, decoded (decoding runs on the iterating task).
        ///
        /// - Throws: what ``TargetEvents/Iterator/next()`` throws; with ``UndecodableEvents/fail``,
        ///   ``CurlewError/objectMapping(_:_:)`` for an event that does not decode.
        public mutating func next() async throws(CurlewError) -> DecodedEvent<Value>? {
            guard !failed else { return nil }
            guard let event = try await events.next() else { return nil }
            return try decoded(event)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CurlewError) -> DecodedEvent<Value>? {
            guard !failed else { return nil }
            guard let event = try await events.next(isolation: actor) else { return nil }
            return try decoded(event)
        }

        private mutating func decoded(_ event: ServerSentEvents.Event) throws(CurlewError) -> DecodedEvent<Value> {
            // The event's data as the standard defines it (invalid UTF-8 replaced), not the raw bytes.
            let data = Data(event.utf8Data)
            do {
                return DecodedEvent(event: event, result: .success(try decoder.decode(Value.self, from: data)))
            } catch {
                let failure = CurlewError.objectMapping(error, attempts.response(with: data))
                if undecodable == .fail {
                    // The stream ends here: its connection closes with the iterator it belongs to.
                    failed = true
                    events.reader.close()
                    throw failure
                }
                return DecodedEvent(event: event, result: .failure(failure))
            }
        }
    }
}
