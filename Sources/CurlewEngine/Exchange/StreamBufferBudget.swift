// Curlew — the bytes a session's streamed responses may hold above their floor, shared by all of them.

import Synchronization

/// The high-mark bytes above ``SessionConfiguration/streamBufferSize`` that a session's streamed
/// responses may hold together: a stream whose reader keeps up draws on it to grow its mark (see
/// ``ExchangeStateMachine/ResponseSide``) and gives it back when it ends. Once it is spent, marks stop
/// growing, so a session's streams never hold more than their floors plus this.
final class StreamBufferBudget: Sendable {
    private let remaining: Atomic<Int>

    init(bytes: Int) {
        remaining = Atomic(max(0, bytes))
    }

    /// Takes up to `bytes`: what is granted (0 once the budget is spent).
    func reserve(_ bytes: Int) -> Int {
        var current = remaining.load(ordering: .relaxed)
        while current > 0 {
            let granted = min(current, bytes)
            let (exchanged, original) = remaining.compareExchange(
                expected: current, desired: current - granted, ordering: .relaxed)
            if exchanged { return granted }
            current = original
        }
        return 0
    }

    /// Gives `bytes` back.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        remaining.add(bytes, ordering: .relaxed)
    }

    /// What is left (for tests and statistics).
    var available: Int { remaining.load(ordering: .relaxed) }
}
