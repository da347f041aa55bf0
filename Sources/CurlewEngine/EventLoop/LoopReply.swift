// Curlew — a value the loop thread hands to a waiting task.

/// A reply from the loop thread to a task suspended on a continuation.
///
/// The value is stored under a mutex before the continuation is resumed and taken under it after, so
/// the hand-off is ordered by a lock the thread sanitizer understands: the concurrency runtime that
/// also orders it is not instrumented, and values passed through `resume(returning:)` showed up as
/// races between the loop thread that built them and the task that read them.
final class LoopReply<Value: Sendable>: Sendable {
    private struct State {
        var continuation: UnsafeContinuation<Void, Never>?
        var value: Value?
    }

    private let state = Locked(State())

    /// Suspends until `send` (or `body`, if it cannot hand the reply on) delivers the value.
    static func wait(_ body: (LoopReply) -> Void) async -> Value? {
        let reply = LoopReply()
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            reply.state.withLock { $0.continuation = continuation }
            body(reply)
        }
        return reply.state.withLock { state in
            defer { state.value = nil }
            return state.value
        }
    }

    /// Delivers the value and resumes the waiting task; later calls do nothing.
    func send(_ value: Value) {
        let continuation = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            guard let continuation = state.continuation else { return nil }
            state.continuation = nil
            state.value = value
            return continuation
        }
        continuation?.resume()
    }
}
