// Curlew — what the running attempt of an event stream gives its reader next.

/// One thing a connection attempt gives the reader: its head, bytes of its body, the body's end, or
/// the failure that ended it.
enum EventStreamItem: Sendable {
    case head(ResponseHead)
    case bytes(ArraySlice<UInt8>)
    /// The body ended cleanly.
    case end
    case failed(any Error)
}
