// Curlew — ending an event stream from a task other than the one reading it.

/// Ends every iteration of one event-stream sequence, from any task: each reader registers what wakes it
/// from its current wait (aborting its transfer, closing its channel, ending its reconnection wait), and
/// checks ``isClosed`` when it wakes.
package final class EventStreamCloser: Sendable {
    private struct State: Sendable {
        var closed = false
        var nextToken = 0
        var wakes: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Locked(State())

    package init() {}

    /// Whether ``close()`` was called.
    package var isClosed: Bool { state.withLock { $0.closed } }

    /// Closes the stream: every reader is woken and ends; iterations started later end at once.
    package func close() {
        let wakes = state.withLock { state in
            state.closed = true
            defer { state.wakes = [:] }
            return Array(state.wakes.values)
        }
        for wake in wakes { wake() }
    }

    /// A token for one reader.
    func register() -> Int {
        state.withLock { state in
            state.nextToken += 1
            return state.nextToken
        }
    }

    /// Sets what wakes reader `token` now (nil: nothing to wake); when already closed, calls it at once.
    func setWake(_ token: Int, _ wake: (@Sendable () -> Void)?) {
        let closed = state.withLock { state in
            if !state.closed { state.wakes[token] = wake }
            return state.closed
        }
        if closed { wake?() }
    }

    /// The reader is gone.
    func unregister(_ token: Int) {
        state.withLock { _ = $0.wakes.removeValue(forKey: token) }
    }

    /// Waits `duration`; returns early when the stream is closed, the task cancelled or `notice` posted.
    func sleep(_ token: Int, for duration: Duration, orUntil notice: ShutdownNotice? = nil) async {
        let gate = SleepGate()
        setWake(token, { gate.open() })
        let watch = notice?.watch { gate.open() }
        defer { if let watch { notice?.unwatch(watch) } }
        let timer = Task {
            try? await Task.sleep(for: duration)
            gate.open()
        }
        await withTaskCancellationHandler {
            await gate.wait()
        } onCancel: {
            gate.open()
        }
        timer.cancel()
        setWake(token, nil)
    }
}

/// A one-shot latch for ``EventStreamCloser/sleep(_:for:)``.
private final class SleepGate: Sendable {
    private let state = Locked((open: false, waiter: CheckedContinuation<Void, Never>?.none))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state in
                if state.open { return true }
                state.waiter = continuation
                return false
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiter = state.withLock { state in
            state.open = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
