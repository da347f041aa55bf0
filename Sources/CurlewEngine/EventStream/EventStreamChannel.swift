// Curlew — the hand-over from the task that holds an event stream's connection to the task that reads
// its events: one item at a time, so a consumer that stops reading stops the connection's reading too.

import Synchronization

/// What a connection attempt hands to the reader.
enum EventStreamItem: Sendable {
    case head(ResponseHead)
    case bytes(ArraySlice<UInt8>)
    /// The body ended cleanly.
    case end
    case failed(any Error)
}

/// A one-item channel between one producer and one consumer. `close()` (from either side, or the
/// consumer's cancellation) wakes both and makes every later call return at once.
final class EventStreamChannel: Sendable {
    private struct State {
        var item: EventStreamItem?
        var sender: UnsafeContinuation<Bool, Never>?
        var receiver: UnsafeContinuation<EventStreamItem?, Never>?
        var closed = false
    }

    private let state = Mutex(State())

    /// Hands `item` over and waits until the consumer has taken it; false when the channel is closed
    /// (the consumer is gone: the producer should stop).
    func send(_ item: EventStreamItem) async -> Bool {
        let waiting: UnsafeContinuation<EventStreamItem?, Never>?? = state.withLock { state in
            if state.closed { return .some(nil) }
            if let receiver = state.receiver {
                state.receiver = nil
                return .some(receiver)
            }
            return nil
        }
        switch waiting {
        case .some(.some(let receiver)):
            receiver.resume(returning: item)
            return true
        case .some(.none):
            return false
        case .none:
            break
        }
        return await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
            let outcome: (taken: UnsafeContinuation<EventStreamItem?, Never>?, refused: Bool) = state.withLock { state in
                if state.closed { return (nil, true) }
                if let receiver = state.receiver {
                    state.receiver = nil
                    return (receiver, false)
                }
                state.item = item
                state.sender = continuation
                return (nil, false)
            }
            if outcome.refused {
                continuation.resume(returning: false)
            } else if let receiver = outcome.taken {
                receiver.resume(returning: item)
                continuation.resume(returning: true)
            }
        }
    }

    /// The next item, or nil once the channel is closed.
    func receive() async -> EventStreamItem? {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<EventStreamItem?, Never>) in
            let ready: (item: EventStreamItem?, sender: UnsafeContinuation<Bool, Never>?, closed: Bool) = state.withLock {
                state in
                if let item = state.item {
                    state.item = nil
                    let sender = state.sender
                    state.sender = nil
                    return (item, sender, false)
                }
                if state.closed { return (nil, nil, true) }
                state.receiver = continuation
                return (nil, nil, false)
            }
            if let item = ready.item {
                ready.sender?.resume(returning: true)
                continuation.resume(returning: item)
            } else if ready.closed {
                continuation.resume(returning: nil)
            }
        }
    }

    /// Closes the channel: a waiting producer gets false, a waiting consumer nil.
    func close() {
        let (sender, receiver) = state.withLock { state in
            state.closed = true
            state.item = nil
            defer {
                state.sender = nil
                state.receiver = nil
            }
            return (state.sender, state.receiver)
        }
        sender?.resume(returning: false)
        receiver?.resume(returning: nil)
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
