// Curlew — how long to wait before trying again: exponential, capped, with full jitter.

/// How long to wait before the next attempt after consecutive failures: exponential from ``base``,
/// capped at ``cap``, with full jitter (a uniformly random wait between zero and that bound), so that
/// clients that failed together do not come back together.
///
/// Retries (the Curlew module's `RetryMiddleware`) and reconnecting event streams (``EventStreamPolicy``)
/// share it; ``BackoffState`` counts the
/// failures and forgets them after a healthy period (``resetAfter``).
public struct Backoff: Sendable, Hashable {
    /// Whether the wait is randomised.
    public enum Jitter: Sendable, Hashable {
        /// A uniformly random wait between zero and the exponential bound (AWS's "full jitter").
        case full
        /// Exactly the exponential bound (for tests and for servers that ask for fixed pacing).
        case none
    }

    /// The bound after the first failure; it doubles with each further one.
    public var base: Duration
    /// The largest bound.
    public var cap: Duration
    /// How the wait is drawn below the bound.
    public var jitter: Jitter
    /// After this long without a failure, the count of consecutive failures starts again.
    public var resetAfter: Duration

    /// A backoff; the defaults (100 ms doubling to 10 s, full jitter, reset after 30 s healthy) suit
    /// calls between services.
    public init(
        base: Duration = .milliseconds(100), cap: Duration = .seconds(10), jitter: Jitter = .full,
        resetAfter: Duration = .seconds(30)
    ) {
        self.base = max(base, .zero)
        self.cap = max(cap, self.base)
        self.jitter = jitter
        self.resetAfter = resetAfter
    }

    /// The defaults: 100 ms doubling to 10 s, full jitter, reset after 30 s.
    public static let `default` = Backoff()

    /// The upper bound of the wait after `failures` consecutive failures (1 or more):
    /// `min(cap, base × 2^(failures − 1))`.
    public func bound(afterFailures failures: Int) -> Duration {
        let exponent = min(max(failures - 1, 0), 62)
        // Doubling beyond the cap is pointless, and beyond 2^62 would overflow.
        var bound = base
        for _ in 0..<exponent {
            bound = bound * 2
            if bound >= cap { return cap }
        }
        return min(bound, cap)
    }

    /// The wait after `failures` consecutive failures, with `random` (in `0..<1`) drawing the jitter.
    public func delay(afterFailures failures: Int, random: Double) -> Duration {
        let bound = bound(afterFailures: failures)
        switch jitter {
        case .none: return bound
        case .full: return bound * min(max(random, 0), 1)
        }
    }
}

/// Consecutive failures counted for a ``Backoff``, forgotten after a healthy period.
public struct BackoffState: Sendable {
    /// The backoff the waits follow.
    public let backoff: Backoff
    /// Consecutive failures so far.
    public private(set) var failures = 0
    private var healthySince: ContinuousClock.Instant?

    /// A count of zero failures.
    public init(_ backoff: Backoff) {
        self.backoff = backoff
    }

    /// Records that things went well at `now` (a response, an open stream): the failure count is
    /// forgotten once they have gone well for ``Backoff/resetAfter``.
    public mutating func succeeded(at now: ContinuousClock.Instant) {
        if healthySince == nil { healthySince = now }
    }

    /// Records a failure at `now` and returns the wait before the next attempt.
    public mutating func failed(at now: ContinuousClock.Instant, random: Double) -> Duration {
        if let healthySince, now - healthySince >= backoff.resetAfter { failures = 0 }
        healthySince = nil
        failures += 1
        return backoff.delay(afterFailures: failures, random: random)
    }
}
