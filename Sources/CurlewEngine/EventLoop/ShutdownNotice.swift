// Curlew — a session's graceful shutdown as event-stream readers between attempts see it.

/// Posted once when a session begins a graceful shutdown. An event-stream reader waiting to reconnect has
/// no transfer the loop could end, so it watches this instead: woken, it ends without reconnecting.
final class ShutdownNotice: Sendable {
    private struct State: Sendable {
        var posted = false
        var nextToken = 0
        var wakes: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Locked(State())

    /// Whether the shutdown has begun.
    var isPosted: Bool { state.withLock { $0.posted } }

    /// The shutdown begins: every watcher is woken, once.
    func post() {
        let wakes = state.withLock { state in
            state.posted = true
            defer { state.wakes = [:] }
            return Array(state.wakes.values)
        }
        for wake in wakes { wake() }
    }

    /// Calls `wake` when the shutdown begins (at once, returning nil, if it has); the token ends the watch.
    func watch(_ wake: @escaping @Sendable () -> Void) -> Int? {
        let token = state.withLock { state -> Int? in
            guard !state.posted else { return nil }
            state.nextToken += 1
            state.wakes[state.nextToken] = wake
            return state.nextToken
        }
        if token == nil { wake() }
        return token
    }

    /// Ends a watch.
    func unwatch(_ token: Int) {
        state.withLock { _ = $0.wakes.removeValue(forKey: token) }
    }
}
