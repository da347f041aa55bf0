// Curlew — the hand-over between a call reporting progress and the task iterating its updates.

/// Holds the newest update and, apart from it, the call's end, so a consumer that is busy sees the
/// latest counts (never a backlog) and still gets the last counts before the completed update.
final class ProgressChannel<Element: Sendable, Failure: Error>: Sendable {
    /// What `next()` hands out.
    enum Next: Sendable {
        /// An update while the call runs.
        case update(Element)
        /// The call's last element (it carries the response).
        case last(Element)
        /// The call failed.
        case failure(Failure)
        /// The iteration was cancelled or ended without the call's end.
        case end
    }

    private struct State: Sendable {
        var latest: Element?
        var end: Next?
        var waiter: CheckedContinuation<Next, Never>?
    }

    private let state = Locked(State())

    init() {}

    /// A new update: replaces one not yet taken. Ignored once the call has ended.
    func yield(_ element: Element) {
        let waiter = state.withLock { state -> CheckedContinuation<Next, Never>? in
            guard state.end == nil else { return nil }
            guard let waiter = state.waiter else {
                state.latest = element
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: .update(element))
    }

    /// The call's end (`.last`, `.failure`) or the iteration's (`.end`); the first one counts.
    func finish(_ end: Next) {
        let waiter = state.withLock { state -> CheckedContinuation<Next, Never>? in
            guard state.end == nil else { return nil }
            state.end = end
            if case .end = end { state.latest = nil }
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: end)
    }

    /// The newest update not yet taken, else the end, else waits for either. Cancelling the waiting task
    /// ends the iteration.
    func next() async -> Next {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Next, Never>) in
                let ready = state.withLock { state -> Next? in
                    if let latest = state.latest {
                        state.latest = nil
                        return .update(latest)
                    }
                    if let end = state.end { return end }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish(.end)
        }
    }
}
