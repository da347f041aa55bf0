// Curlew — a clock for middleware tests: waits return at once and advance the time.

public import Curlew

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A ``/Curlew/MiddlewareClock`` for tests: ``sleep(for:)`` records the wait, advances the clock by it and
/// returns at once, so tests of retries and refreshes never sleep. A cancelled task's wait throws.
///
/// ```swift
/// let clock = TestClock()
/// let retry = RetryMiddleware(policy: .default, clock: clock, random: { 0.5 })
/// // ... after the call:
/// #expect(clock.sleeps == [.milliseconds(50)])
/// ```
public final class TestClock: MiddlewareClock {
    private struct State {
        var offset: Duration = .zero
        var date: Date
        var sleeps: [Duration] = []
    }

    private let origin = ContinuousClock.now
    private let state: Locked<State>

    /// A clock whose wall-clock time starts at `date` (default 2023-11-14 22:13:20 UTC).
    public init(date: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        state = Locked(State(date: date))
    }

    /// The monotonic time: the moment the clock was made, plus every wait and advance since.
    public var now: ContinuousClock.Instant { origin + state.withLock { $0.offset } }

    /// The wall-clock time, advanced with ``now``.
    public var date: Date { state.withLock { $0.date } }

    /// Every wait asked for, in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// Records the wait and advances the clock by it.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        advance(by: duration)
        state.withLock { $0.sleeps.append(duration) }
        await Task.yield()
        try Task.checkCancellation()
    }

    /// Moves the clock forward by `duration` without recording a wait.
    public func advance(by duration: Duration) {
        state.withLock { state in
            state.offset += duration
            let components = duration.components
            state.date += TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
        }
    }
}
