// Curlew — a middleware that applies a credential and refreshes it once for everyone who needs it.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Applies an ``Authenticator``'s credential to every request and keeps it fresh.
///
/// - Before a request, a missing credential, or one that ``AuthenticationCredential/requiresRefresh(at:)``,
///   is refreshed first; a request that arrives while a refresh runs waits for it.
/// - When a server refuses the credential (401 by default), decided from the head before your
///   handler reads the body, the credential is refreshed once and the request replayed once with the
///   new one; a second refusal is returned as it is. A request that was refused with a credential older
///   than the current one is replayed with the current one, without another refresh.
/// - However many requests need a refresh at the same time, one refresh runs and all of them wait for
///   it; if it fails, every one of them fails with ``AuthenticationError/refreshFailed(_:)``.
/// - At most ``maxRefreshes`` refreshes run within ``refreshWindow``; beyond that requests fail with
///   ``AuthenticationError/refreshLimitReached(maxRefreshes:window:)`` instead of looping.
/// - A refused request whose body cannot be replayed is returned as it is.
///
/// ``AccessTokenPlugin`` remains the simpler choice for a token that never changes.
public final class AuthenticationMiddleware<A: Authenticator>: Middleware {
    /// The authenticator.
    public let authenticator: A
    /// Most refreshes within ``refreshWindow``.
    public let maxRefreshes: Int
    /// The window ``maxRefreshes`` applies to.
    public let refreshWindow: Duration
    let clock: any MiddlewareClock

    private struct State {
        var credential: A.Credential?
        /// Incremented by every successful refresh: tells a request whether the credential it was
        /// refused with is still the current one.
        var generation = 0
        var flight: RefreshFlight<A.Credential>?
        var refreshes: [ContinuousClock.Instant] = []
    }

    private let state: Locked<State>

    /// A middleware that authenticates with `authenticator`.
    ///
    /// - Parameters:
    ///   - authenticator: Applies and refreshes the credential.
    ///   - credential: The credential to start with; nil: refreshed before the first request.
    ///   - maxRefreshes: Most refreshes within `refreshWindow` (default 5).
    ///   - refreshWindow: Default 30 seconds.
    ///   - clock: Where time is read (a test clock in tests).
    public init(
        _ authenticator: A, credential: A.Credential? = nil, maxRefreshes: Int = 5, refreshWindow: Duration = .seconds(30),
        clock: any MiddlewareClock = .system
    ) {
        self.authenticator = authenticator
        self.maxRefreshes = max(1, maxRefreshes)
        self.refreshWindow = refreshWindow
        self.clock = clock
        state = Locked(State(credential: credential))
    }

    /// The credential in use (nil before the first refresh).
    public var credential: A.Credential? { state.withLock { $0.credential } }

    private enum Renewal {
        case ready(A.Credential, Int)
        case wait(RefreshFlight<A.Credential>)
    }

    private enum Step<Return> {
        case done(Return)
        case refused
    }

    public func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        guard authenticator.authenticates(request, context: context) else {
            return try await next(request, context, handler: handler)
        }
        let (credential, generation) = try await current(context, request: request)
        var authenticated = request
        authenticator.apply(credential, to: &authenticated)
        guard request.body?.isReplayable ?? true else {
            return try await next(authenticated, context, handler: handler)
        }
        let authenticator = self.authenticator
        let step = try await next(authenticated, context) { head, body throws(CurlewError) -> Step<Return> in
            if authenticator.isAuthenticationFailure(head, for: request) { return .refused }
            return .done(try await handler(head, body))
        }
        guard case .done(let value) = step else {
            context.logger.debug("the credential was refused; replaying with a new one", metadata: ["url": "\(request.url)"])
            let (renewed, _) = try await refreshed(after: generation, context, request: request)
            var replay = request
            authenticator.apply(renewed, to: &replay)
            var context = context
            context.attempt += 1
            return try await next(replay, context, handler: handler)
        }
        return value
    }

    /// The credential to use now: the current one, after any refresh that is running or that it needs.
    private func current(
        _ context: MiddlewareContext, request: TransportRequest
    ) async throws(CurlewError) -> (A.Credential, Int) {
        let date = clock.date
        let flight = try state.withLock { state throws(CurlewError) -> RefreshFlight<A.Credential>? in
            if let flight = state.flight { return flight }
            if let credential = state.credential, !credential.requiresRefresh(at: date) { return nil }
            return try startFlight(&state, context: context)
        }
        if let flight { return try await flight.wait(cancelled: { .transport(.cancelled(request)) }) }
        return try state.withLock { state throws(CurlewError) in
            guard let credential = state.credential else { throw .transport(.cancelled(request)) }
            return (credential, state.generation)
        }
    }

    /// A credential newer than the one of `generation`: the current one when it already is, else the
    /// result of the refresh running or of a new one.
    private func refreshed(
        after generation: Int, _ context: MiddlewareContext, request: TransportRequest
    ) async throws(CurlewError) -> (A.Credential, Int) {
        let next = try state.withLock { state throws(CurlewError) -> Renewal in
            if state.generation > generation, let credential = state.credential {
                return .ready(credential, state.generation)
            }
            if let flight = state.flight { return .wait(flight) }
            return .wait(try startFlight(&state, context: context))
        }
        switch next {
        case .ready(let credential, let generation): return (credential, generation)
        case .wait(let flight): return try await flight.wait(cancelled: { .transport(.cancelled(request)) })
        }
    }

    /// Starts a refresh, unless the window is full. Called with the lock held.
    private func startFlight(_ state: inout State, context: MiddlewareContext) throws(CurlewError) -> RefreshFlight<A.Credential> {
        let now = clock.now
        state.refreshes.removeAll { now - $0 >= refreshWindow }
        guard state.refreshes.count < maxRefreshes else {
            context.logger.warning("credential refresh limit reached", metadata: ["refreshes": "\(maxRefreshes)", "window": "\(refreshWindow)"])
            throw .underlying(AuthenticationError.refreshLimitReached(maxRefreshes: maxRefreshes, window: refreshWindow), nil)
        }
        state.refreshes.append(now)
        let flight = RefreshFlight<A.Credential>()
        state.flight = flight
        let current = state.credential
        let authenticator = self.authenticator
        // Its own task: a caller that is cancelled leaves, the refresh goes on for the others.
        Task {
            let result: Result<A.Credential, CurlewError>
            do {
                result = .success(try await authenticator.refresh(current, context: context))
            } catch {
                context.logger.warning("credential refresh failed", metadata: ["error": "\(error)"])
                result = .failure(.underlying(AuthenticationError.refreshFailed(error), nil))
            }
            let outcome = self.state.withLock { state -> Result<(A.Credential, Int), CurlewError> in
                state.flight = nil
                return result.map { credential in
                    state.credential = credential
                    state.generation += 1
                    return (credential, state.generation)
                }
            }
            flight.finish(outcome)
        }
        return flight
    }
}

/// One refresh in progress and the requests waiting for it; a cancelled waiter leaves at once.
final class RefreshFlight<Credential: Sendable>: Sendable {
    typealias Outcome = Result<(Credential, Int), CurlewError>

    private struct State {
        var outcome: Outcome?
        var waiters: [Int: CheckedContinuation<Outcome, Never>] = [:]
        var next = 0
    }

    private let state = Locked(State())

    func wait(cancelled: @escaping @Sendable () -> CurlewError) async throws(CurlewError) -> (Credential, Int) {
        let ticket = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let ready = state.withLock { state -> Outcome? in
                    if let outcome = state.outcome { return outcome }
                    if Task.isCancelled { return .failure(cancelled()) }
                    state.waiters[ticket] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: ticket) }
            waiter?.resume(returning: .failure(cancelled()))
        }
        return try outcome.get()
    }

    func finish(_ outcome: Outcome) {
        let waiters = state.withLock { state -> [CheckedContinuation<Outcome, Never>] in
            state.outcome = outcome
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }
}
