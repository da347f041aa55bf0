// Curlew — the hand-over from the task that holds an event stream's connection to the task that reads
// its events: one item at a time, so a consumer that stops reading stops the connection's reading too.

/// What a connection attempt hands to the reader.
enum EventStreamItem: Sendable {
    case head(ResponseHead)
    case bytes(ArraySlice<UInt8>)
    /// The body ended cleanly.
    case end
    case failed(any Error)
}

extension EventStreamItem: BufferedChunk {
    /// Items count one each: a channel of one item's mark hands over one at a time.
    package var weight: Int { 1 }
    package static var empty: EventStreamItem { .end }
}

/// A one-item channel between one producer and one consumer (a ``HandOff`` whose mark is one item):
/// `send` returns once the consumer has taken the item. `close()` (from either side, or the consumer's
/// cancellation) wakes both and makes every later call return at once.
typealias EventStreamChannel = HandOff<EventStreamItem>

extension HandOff where Chunk == EventStreamItem {
    convenience init() {
        self.init(high: 1)
    }

    /// Sends a body's chunks and then its end, until the channel is closed. A function of its own: the
    /// producer holds this frame while the stream is open, and it holds nothing of the head.
    @inline(never)
    func forward(_ body: ResponseBody) async throws {
        var iterator = body.makeAsyncIterator()
        while let chunk = try await iterator.next() {
            guard await send(.bytes(chunk)) else { return }
        }
        _ = await send(.end)
    }
}
