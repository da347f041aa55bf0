// Curlew — how many retries a dependency may cost: a token bucket per origin, so that a dependency that
// is down does not turn every call into several and cannot use up the retries of the others.

import Synchronization

/// A token bucket per pool key (scheme, host and port): each retry takes a token, tokens come back
/// with time and with successful responses, and when a key's bucket is empty its requests are not
/// retried (their failure is returned as it is) until it fills again.
///
/// One budget may be shared by several ``RetryMiddleware`` (several providers calling one service).
public final class RetryBudget: Sendable {
    /// Tokens a bucket holds at most, and starts with.
    public let capacity: Double
    /// Tokens a bucket regains per second.
    public let refillPerSecond: Double
    /// Tokens a bucket regains per successful response: one whose status the policy does not retry.
    public let depositPerSuccess: Double

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let buckets = Locked<[String: Bucket]>([:])
    /// Whether `buckets` holds any bucket: written under its lock whenever it changes, read without it by
    /// ``deposit(forURL:at:)``, so that a success takes no lock while every bucket is full (the usual case).
    private let recordsBuckets = Atomic<Bool>(false)

    /// A budget of `capacity` retries per origin at once (default 10), regaining `refillPerSecond`
    /// (default 1) each second and `depositPerSuccess` (default 0.1) per success: in steady state
    /// retries stay under about one per second plus 10% of the successful calls.
    public init(capacity: Double = 10, refillPerSecond: Double = 1, depositPerSuccess: Double = 0.1) {
        self.capacity = max(capacity, 0)
        self.refillPerSecond = max(refillPerSecond, 0)
        self.depositPerSuccess = max(depositPerSuccess, 0)
    }

    /// The tokens left for `url`'s origin at `now`.
    public func tokens(for url: String, at now: ContinuousClock.Instant) -> Double {
        let key = Self.key(for: url)
        return buckets.withLock { buckets in
            guard let bucket = buckets[key] else { return capacity }
            return refilled(bucket, at: now).tokens
        }
    }

    /// Takes a token for a retry of a request to `url`; false (and nothing taken) when none is left.
    func withdraw(for key: String, at now: ContinuousClock.Instant) -> Bool {
        buckets.withLock { buckets in
            var bucket = buckets[key].map { refilled($0, at: now) } ?? Bucket(tokens: capacity, updated: now)
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                recordsBuckets.store(true, ordering: .releasing)
                return false
            }
            bucket.tokens -= 1
            buckets[key] = bucket
            recordsBuckets.store(true, ordering: .releasing)
            return true
        }
    }

    /// Returns part of a token for a success of a request to `url`.
    func deposit(forURL url: String, at time: @autoclosure () -> ContinuousClock.Instant) {
        // While no origin has retried (the usual case) every bucket is full: nothing to record, and no
        // key to work out.
        guard recordsBuckets.load(ordering: .acquiring) else { return }
        let key = Self.key(for: url)
        let now = time()
        buckets.withLock { buckets in
            // A key that never retried has a full bucket: nothing to record.
            guard var bucket = buckets[key].map({ refilled($0, at: now) }) else { return }
            bucket.tokens = min(capacity, bucket.tokens + depositPerSuccess)
            buckets[key] = bucket.tokens >= capacity ? nil : bucket
            recordsBuckets.store(!buckets.isEmpty, ordering: .releasing)
        }
    }

    private func refilled(_ bucket: Bucket, at now: ContinuousClock.Instant) -> Bucket {
        guard now > bucket.updated else { return bucket }
        let elapsed = now - bucket.updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Bucket(tokens: min(capacity, bucket.tokens + seconds * refillPerSecond), updated: now)
    }

    /// The pool key of a URL: scheme, host (lowercased) and port (the scheme's default when absent).
    static func key(for url: String) -> String {
        guard let separator = url.firstRange(of: "://") else { return url }
        let scheme = url[..<separator.lowerBound].lowercased()
        let rest = url[separator.upperBound...]
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = Substring(authority)
        var port: Substring?
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") { port = after.dropFirst() }
            host = host[...close]
        } else if let colon = host.lastIndex(of: ":") {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        let defaultPort = scheme == "https" ? "443" : "80"
        return "\(scheme)://\(host.lowercased()):\(port.flatMap { $0.isEmpty ? nil : $0 } ?? Substring(defaultPort))"
    }
}
