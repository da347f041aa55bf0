// Curlew — an event with its data decoded, and what happens to one that does not decode.

/// A server-sent event and its data decoded from JSON.
public struct DecodedEvent<Value: Sendable>: Sendable {
    /// The event as received.
    public let event: ServerSentEvents.Event
    /// The decoded data, or ``CurlewError/objectMapping(_:_:)`` with the event's data as the response
    /// body (and the status and fields of the connection that carried it).
    public let result: Result<Value, CurlewError>

    /// The decoded data; nil when it did not decode.
    public var value: Value? { try? result.get() }
}

/// What a typed event stream does with an event whose data does not decode.
public enum UndecodableEvents: Sendable, Hashable {
    /// Hands it over with a failed ``DecodedEvent/result``, and goes on.
    case report
    /// Ends the stream, throwing ``CurlewError/objectMapping(_:_:)``.
    case fail
}
