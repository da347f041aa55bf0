// Curlew — a hand-over between two tasks through one ChunkBuffer: the sender waits while the buffer is
// full, the receiver while it is empty.

/// Chunks handed from one task to another through a ``ChunkBuffer``: ``send(_:)`` waits while the
/// buffer holds its high mark (until the receiver has taken it down to the low mark), ``receive()``
/// while it is empty. With a high mark of one item, each send waits until its item was taken, so a
/// receiver that stops reading stops the sender too. ``close()`` (from either side) wakes both and makes
/// every later call return at once.
package final class HandOff<Chunk: BufferedChunk & Sendable>: Sendable {
    private enum Phase {
        case open
        case closed
    }

    /// What a send found.
    private enum Step {
        case refused
        case handed(UnsafeContinuation<Chunk?, Never>)
        case buffered(full: Bool)
    }

    private struct State: Sendable {
        var buffer: ChunkBuffer<Chunk>
        var phase = Phase.open
        var sender: UnsafeContinuation<Bool, Never>?
        var receiver: UnsafeContinuation<Chunk?, Never>?
    }

    private let state: Locked<State>

    package init(high: Int) {
        state = Locked(State(buffer: ChunkBuffer(high: high)))
    }

    /// Hands `chunk` over; returns once there is room for the next one: true, or false when the hand-over
    /// is closed (the receiver is gone: the sender should stop).
    package func send(_ chunk: Chunk) async -> Bool {
        let step = state.withLock { state -> Step in
            switch state.phase {
            case .closed:
                return .refused
            case .open:
                if let receiver = state.receiver, state.buffer.isEmpty {
                    state.receiver = nil
                    return .handed(receiver)
                }
                state.buffer.append(chunk)
                return .buffered(full: state.buffer.isFull)
            }
        }
        switch step {
        case .refused:
            return false
        case .handed(let receiver):
            receiver.resume(returning: chunk)
            return true
        case .buffered(full: false):
            return true
        case .buffered(full: true):
            return await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
                let answer = state.withLock { state -> Bool? in
                    switch state.phase {
                    case .closed: return false
                    case .open:
                        guard state.buffer.held > state.buffer.low else { return true }
                        state.sender = continuation
                        return nil
                    }
                }
                if let answer { continuation.resume(returning: answer) }
            }
        }
    }

    /// The next chunk, or nil once the hand-over is closed.
    package func receive() async -> Chunk? {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Chunk?, Never>) in
            let (chunk, sender, done) = state.withLock { state -> (Chunk?, UnsafeContinuation<Bool, Never>?, Bool) in
                switch state.phase {
                case .closed:
                    return (nil, nil, true)
                case .open:
                    guard let chunk = state.buffer.popFirst() else {
                        state.receiver = continuation
                        return (nil, nil, false)
                    }
                    var sender: UnsafeContinuation<Bool, Never>?
                    if state.buffer.held <= state.buffer.low { swap(&sender, &state.sender) }
                    return (chunk, sender, true)
                }
            }
            sender?.resume(returning: true)
            if done { continuation.resume(returning: chunk) }
        }
    }

    /// Closes the hand-over: a waiting sender gets false, a waiting receiver nil; what is held is dropped.
    package func close() {
        let (sender, receiver) = state.withLock { state in
            state.phase = .closed
            state.buffer.removeAll()
            defer {
                state.sender = nil
                state.receiver = nil
            }
            return (state.sender, state.receiver)
        }
        sender?.resume(returning: false)
        receiver?.resume(returning: nil)
    }
}
