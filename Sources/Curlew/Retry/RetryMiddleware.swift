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
public struct RetryMiddleware: TransportMiddleware {
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
        lookup = RetryLookup(policy)
    }

    /// The policy's methods and statuses as every request reads them.
    let lookup: RetryLookup

    /// What an attempt's head (or its failure) decided. Not generic over the caller's result: the chain
    /// below is instantiated with it, and a generic step costs a metadata lookup per call. The result is
    /// kept in a ``HandedValues`` instead.
    private enum Step {
        /// The caller's handler ran and returned the value kept at the address; `listed`: the status is
        /// one the policy retries (no retry was left for it).
        case delivered(UnsafeMutableRawPointer, listed: Bool)
        case retry(after: Duration, Reason)
    }

    /// Why an attempt is retried.
    private enum Reason: CustomStringConvertible {
        case status(Int)
        case failure(TransportError.Code)

        var description: String {
            switch self {
            case .status(let status): "status \(status)"
            case .failure(let code): "a transport failure (\(code))"
            }
        }

        /// The debug line logged before the retry.
        var logMessage: Logger.Message {
            switch self {
            case .status: "retrying after a status"
            case .failure: "retrying after a transport failure"
            }
        }

        /// That line's metadata.
        func metadata(attempt: Int, wait: Duration) -> Logger.Metadata {
            switch self {
            case .status(let status): ["attempt": "\(attempt)", "status": "\(status)", "wait": "\(wait)"]
            case .failure(let code): ["attempt": "\(attempt)", "error": "\(code)", "wait": "\(wait)"]
            }
        }
    }

    // Inlined into the protocol witness: one async frame for the middleware, not two. In the caller's
    // isolation, as the requirement is: no hop to the global executor and back on every call.
    @inline(__always)
    public nonisolated(nonsending) func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        // An event stream's reconnection already follows the stream's own policy and backoff.
        guard context.reconnection == 0, policy.maxAttempts > 1,
            lookup.retries(request.method) || policy.optsIn(request)
        else {
            return try await next(request, context, handler: handler)
        }
        guard request.body?.isReplayable ?? true else {
            return try await sendOnce(request, context: context, next: next, handler: handler)
        }
        guard request.timeout == nil, policy.totalTimeout == nil else {
            return try await retrying(request, context: context, next: next, handler: handler, after: nil)
        }
        // The usual exchange: no deadline, so nothing to set on the request; the first attempt sends the
        // request and the context as they came (no copies), and its frame holds no clock instant (a
        // resilient type, allocated on the task's stack). Further attempts are the loop's.
        var values = HandedValues<Return>()
        defer { values.release() }
        let step: Step
        do {
            step = try await next(request, context) { head, body throws(CurlewError) -> Step in
                let status = head.status.code
                let listed = lookup.lists(status)
                if listed, let wait = statusWait(head, failures: 1, url: request.url) {
                    return .retry(after: wait, .status(status))
                }
                return .delivered(values.keep(try await handler(head, body)), listed: listed)
            }
        } catch {
            guard case .transport(let failure) = error, !failure.isCancellation, policy.retries(failure, of: request),
                let wait = backoffWait(failures: 1, url: request.url)
            else { throw error }
            return try await retrying(
                request, context: context, next: next, handler: handler, after: .retry(after: wait, .failure(failure.code)))
        }
        guard case .delivered(let node, let listed) = step else {
            return try await retrying(request, context: context, next: next, handler: handler, after: step)
        }
        deposit(unless: listed, url: request.url)
        return values.take(node)
    }

    /// The attempts after a first one that `first` says to retry (nil: every attempt, the first
    /// included), each with what is left of the deadline (the request's timeout, else the policy's total
    /// timeout, counted from the first attempt) as its timeout. A request with a deadline runs all its
    /// attempts here; the deadline-less first attempt in ``intercept(_:context:next:handler:)`` hands
    /// over only its retry.
    @inline(never)
    nonisolated(nonsending) private func retrying<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>,
        after first: Step?
    ) async throws(CurlewError) -> Return {
        let deadline = (request.timeout ?? policy.totalTimeout).map { clock.now + $0 }
        var values = HandedValues<Return>()
        defer { values.release() }
        var attemptRequest = request
        var context = context
        var failures = 0
        var pending = first
        while true {
            if let step = pending {
                switch step {
                case .delivered(let node, let listed):
                    deposit(unless: listed, url: request.url)
                    return values.take(node)
                case .retry(let wait, let reason):
                    context.logger.debug(reason.logMessage, metadata: reason.metadata(attempt: context.attempt, wait: wait))
                    context.metrics?.count(ClientMetricNames.retries, url: request.url)
                    try await pause(wait, request: request)
                }
                failures += 1
                context.attempt += 1
            }
            if let deadline { attemptRequest.timeout = max(deadline - clock.now, .milliseconds(1)) }
            pending = try await attempt(
                attemptRequest, context, next: next, handler: handler, failures: failures, deadline: deadline,
                original: request, values: &values)
        }
    }

    /// One attempt of `original` (sent as `request`), after `failures` failed ones: delivered when the
    /// caller's handler ran, else the wait before the next. Throws what may not be retried.
    // Inlined into the loop, its one caller.
    @inline(__always)
    nonisolated(nonsending) private func attempt<Return>(
        _ request: TransportRequest, _ context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>,
        failures: Int, deadline: ContinuousClock.Instant?, original: TransportRequest, values: inout HandedValues<Return>
    ) async throws(CurlewError) -> Step {
        let isLast = failures + 1 >= policy.maxAttempts
        do {
            return try await next(request, context) { head, body throws(CurlewError) -> Step in
                let status = head.status.code
                let listed = lookup.lists(status)
                if !isLast, listed,
                    let wait = statusWait(head, failures: failures + 1, deadline: deadline, url: original.url)
                {
                    return .retry(after: wait, .status(status))
                }
                return .delivered(values.keep(try await handler(head, body)), listed: listed)
            }
        } catch {
            guard !isLast, case .transport(let failure) = error, !failure.isCancellation,
                policy.retries(failure, of: original),
                let wait = backoffWait(failures: failures + 1, deadline: deadline, url: original.url)
            else { throw error }
            return .retry(after: wait, .failure(failure.code))
        }
    }

    /// Returns part of a token for a response handed to the caller, unless its status is one the policy
    /// retries (returned because no retry was left: not a success to earn tokens by).
    @inline(__always)
    private func deposit(unless listed: Bool, url: String) {
        if !listed { budget.deposit(forURL: url, at: clock.now) }
    }

    /// The one attempt of a request whose body cannot be sent again: what would have been retried fails
    /// with ``/CurlewEngine/TransportError/Code-swift.struct/bodyNotReplayable``.
    nonisolated(nonsending) private func sendOnce<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        var values = HandedValues<Return>()
        defer { values.release() }
        let step: Step
        do {
            step = try await next(request, context) { head, body throws(CurlewError) -> Step in
                if lookup.lists(head.status.code) { return .retry(after: .zero, .status(head.status.code)) }
                return .delivered(values.keep(try await handler(head, body)), listed: false)
            }
        } catch {
            guard case .transport(let failure) = error, !failure.isCancellation, policy.retries(failure, of: request) else {
                throw error
            }
            throw .transport(Self.notReplayable(request, after: "a transport failure (\(failure.code))", underlying: failure))
        }
        switch step {
        case .delivered(let node, _):
            return values.take(node)
        case .retry(_, let reason):
            throw .transport(Self.notReplayable(request, after: "\(reason)", underlying: nil))
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

    /// ``statusWait(_:failures:deadline:url:)`` without a deadline. Not async, and apart: the nil
    /// instant it passes (a resilient type) is then on the thread's stack, not the task's.
    @inline(never)
    private func statusWait(_ head: ResponseHead, failures: Int, url: String) -> Duration? {
        statusWait(head, failures: failures, deadline: nil, url: url)
    }

    /// ``backoffWait(failures:deadline:url:)`` without a deadline (apart for the same reason).
    @inline(never)
    private func backoffWait(failures: Int, url: String) -> Duration? {
        backoffWait(failures: failures, deadline: nil, url: url)
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
