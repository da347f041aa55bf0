// Curlew — a latch that holds server handlers (or anything else) until a test lets them go.

import CurlewEngine

/// A latch: `wait()` suspends until `open()` is called (at once if it has been).
package final class Gate: Sendable {
    private let state = Locked((isOpen: false, waiters: [CheckedContinuation<Void, Never>]()))

    package init() {}

    /// Whether ``open()`` has been called.
    package var isOpen: Bool {
        state.withLock { $0.isOpen }
    }

    package func wait() async {
        await withCheckedContinuation { continuation in
            let openAlready = state.withLock { state in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if openAlready { continuation.resume() }
        }
    }

    package func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
