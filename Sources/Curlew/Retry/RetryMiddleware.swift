// Curlew — a middleware that sends an exchange again when a policy says it is safe and worth it.

import HTTPTypes
import Logging

/// Sends a request again after a transient failure, when its ``RetryPolicy`` says that is safe: only
/// retried methods or opted-in requests, only bodies that can be replayed, only failures that prove
/// the request was not processed (or, for idempotent requests, a connection closed before any
/// response byte), and statuses the policy lists.
///
/// A request the policy would retry whose body cannot be sent again (a stream read once, an OpenAPI
/// body iterated once) is sent once; a failure or a listed status that would have been retried then fails
/// the call with ``/CurlewEngine/TransportError/Code-swift.struct/bodyNotReplayable`` (the failure as its
/// ``/CurlewEngine/TransportError/underlying``) instead of being resent with a body that is gone.
///
/// The decision on a status is taken from the head, before your handler reads the body; the body of a
/// response that is retried is never read (its connection is closed). The waits follow `Retry-After`
/// (seconds or an HTTP date, at most ``RetryPolicy/maxRetryAfter``) or the policy's ``/CurlewEngine/Backoff``;
/// cancelling the calling task ends a wait at once. A request's total timeout spans all its attempts
/// and waits. A ``RetryBudget`` per origin stops retry storms: when it is spent, failures are returned
/// as they are. Off unless you add it to a provider's or a chain's middleware.
///
/// libcurl retries on its own before a failure gets here: a request on a reused connection that turns
/// out dead before any response byte, and an HTTP/2 stream the server refused (REFUSED_STREAM, also
/// what a GOAWAY makes of streams above its last id), are sent again on a new connection up to 5 times,
/// for any method. What reaches the middleware has already been through that.
public struct RetryMiddleware: Middleware {
    /// What is retried and how.
    public let policy: RetryPolicy
    /// The retries each origin may still spend.
    public let budget: RetryBudget
    let clock: any MiddlewareClock
    let random: @Sendable () -> Double

    /// A retry middleware.
    ///
    /// - Parameters:
    ///   - policy: What is retried and how. Default ``RetryPolicy/default``.
    ///   - budget: The retry budget; share one between middleware calling the same services.
    ///   - clock: Where time is read and waited on (a test clock in tests).
    ///   - random: Draws the jitter, in `0..<1`.
    public init(
        policy: RetryPolicy = .default, budget: RetryBudget = RetryBudget(), clock: any MiddlewareClock = .system,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.policy = policy
        self.budget = budget
        self.clock = clock
        self.random = random
    }

    /// What an attempt's head decided.
    private enum Step<Return> {
        case done(Return)
        case retry(after: Duration, status: Int)
    }

    public func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        // An event stream's reconnection already follows the stream's own policy and backoff.
        guard policy.retriesMethod(of: request), policy.maxAttempts > 1, context.reconnection == 0 else {
            return try await next(request, context, handler: handler)
        }
        guard request.body?.isReplayable ?? true else {
            return try await sendOnce(request, context: context, next: next, handler: handler)
        }
        let deadline = (request.timeout ?? policy.totalTimeout).map { clock.now + $0 }
        var attemptRequest = request
        var context = context
        var failures = 0
        while true {
            if let deadline { attemptRequest.timeout = max(deadline - clock.now, .milliseconds(1)) }
            let isLast = failures + 1 >= policy.maxAttempts
            var handedStatus = 0
            let step: Step<Return>
            do {
                step = try await next(attemptRequest, context) { head, body throws(CurlewError) -> Step<Return> in
                    if !isLast, policy.statuses.contains(head.status.code),
                        let wait = statusWait(head, failures: failures + 1, deadline: deadline, url: request.url)
                    {
                        return .retry(after: wait, status: head.status.code)
                    }
                    handedStatus = head.status.code
                    return .done(try await handler(head, body))
                }
            } catch {
                guard !isLast, case .transport(let failure) = error, !failure.isCancellation,
                    policy.retries(failure, of: request),
                    let wait = backoffWait(failures: failures + 1, deadline: deadline, url: request.url)
                else { throw error }
                context.logger.debug(
                    "retrying after a transport failure",
                    metadata: ["attempt": "\(context.attempt)", "error": "\(failure.code)", "wait": "\(wait)"])
                context.metrics?.count(ClientMetricNames.retries, url: request.url)
                try await pause(wait, request: request)
                failures += 1
                context.attempt += 1
                continue
            }
            switch step {
            case .done(let value):
                // A retried status returned because no retry was left is not a success to earn tokens by.
                if !policy.statuses.contains(handedStatus) { budget.deposit(forURL: request.url, at: clock.now) }
                return value
            case .retry(let wait, let status):
                context.logger.debug(
                    "retrying after a status",
                    metadata: ["attempt": "\(context.attempt)", "status": "\(status)", "wait": "\(wait)"])
                context.metrics?.count(ClientMetricNames.retries, url: request.url)
                try await pause(wait, request: request)
                failures += 1
                context.attempt += 1
            }
        }
    }

    /// The one attempt of a request whose body cannot be sent again: what would have been retried fails
    /// with ``/CurlewEngine/TransportError/Code-swift.struct/bodyNotReplayable``.
    nonisolated(nonsending) private func sendOnce<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        let step: Step<Return>
        do {
            step = try await next(request, context) { head, body throws(CurlewError) -> Step<Return> in
                if policy.statuses.contains(head.status.code) { return .retry(after: .zero, status: head.status.code) }
                return .done(try await handler(head, body))
            }
        } catch {
            guard case .transport(let failure) = error, !failure.isCancellation, policy.retries(failure, of: request) else {
                throw error
            }
            throw .transport(Self.notReplayable(request, after: "a transport failure (\(failure.code))", underlying: failure))
        }
        switch step {
        case .done(let value):
            return value
        case .retry(_, let status):
            throw .transport(Self.notReplayable(request, after: "status \(status)", underlying: nil))
        }
    }

    private static func notReplayable(
        _ request: TransportRequest, after reason: String, underlying: TransportError?
    ) -> TransportError {
        var error = TransportError(
            .bodyNotReplayable,
            message: "the request would be retried after \(reason), but its body is a stream that cannot be sent again",
            url: request.url, method: request.method.rawValue)
        error.underlying = underlying
        return error
    }

    /// The wait before retrying a response with a retried status, or nil to return it as it is: a
    /// `Retry-After` longer than allowed, a wait past the deadline, or a spent budget.
    private func statusWait(
        _ head: ResponseHead, failures: Int, deadline: ContinuousClock.Instant?, url: String
    ) -> Duration? {
        var wait: Duration
        if let value = head.headerFields[.retryAfter], let asked = RetryAfter.delay(value, now: clock.date) {
            guard asked <= policy.maxRetryAfter else { return nil }
            wait = asked
        } else {
            wait = policy.backoff.delay(afterFailures: failures, random: random())
        }
        wait = max(wait, .zero)
        return spend(wait, deadline: deadline, url: url)
    }

    /// The backoff wait before retrying a transport failure, or nil when the deadline or the budget
    /// allows none.
    private func backoffWait(failures: Int, deadline: ContinuousClock.Instant?, url: String) -> Duration? {
        spend(policy.backoff.delay(afterFailures: failures, random: random()), deadline: deadline, url: url)
    }

    /// `wait`, when another attempt still fits before the deadline and the budget has a token for it.
    private func spend(_ wait: Duration, deadline: ContinuousClock.Instant?, url: String) -> Duration? {
        let now = clock.now
        if let deadline, now + wait >= deadline { return nil }
        guard budget.withdraw(for: RetryBudget.key(for: url), at: now) else { return nil }
        return wait
    }

    private func pause(_ wait: Duration, request: TransportRequest) async throws(CurlewError) {
        guard wait > .zero else {
            if Task.isCancelled { throw .transport(.cancelled(request)) }
            return
        }
        do {
            try await clock.sleep(for: wait)
        } catch {
            throw .transport(.cancelled(request))
        }
    }
}
