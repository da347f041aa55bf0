// Curlew — a middleware that applies a credential and refreshes it once for everyone who needs it.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Applies a ``CredentialAuthenticator``'s credential to every request and keeps it fresh.
///
/// - Before a request, a missing credential, or one that ``AuthenticationCredential/requiresRefresh(at:)``,
///   is refreshed first; a request that arrives while a refresh runs waits for it.
/// - When a server refuses the credential (401 by default), decided from the head before your
///   handler reads the body, the credential is refreshed once and the request replayed once with the
///   new one; a second refusal is returned as it is. A request that was refused with a credential older
///   than the current one is replayed with the current one, without another refresh (or, while a refresh
///   runs, with its result).
/// - However many requests need a refresh at the same time, one refresh runs and all of them wait for
///   it; if it fails, every one of them fails with ``AuthenticationError/refreshFailed(_:)``.
/// - At most ``maxRefreshes`` refreshes run within ``refreshWindow``; beyond that requests fail with
///   ``AuthenticationError/refreshLimitReached(maxRefreshes:window:)`` instead of looping.
/// - A refused request whose body cannot be replayed is returned as it is.
///
/// ``AccessTokenPlugin`` remains the simpler choice for a token that never changes.
public final class AuthenticationMiddleware<A: CredentialAuthenticator>: TransportMiddleware {
    /// The authenticator.
    public let authenticator: A
    /// Most refreshes within ``refreshWindow``.
    public var maxRefreshes: Int { store.maxRefreshes }
    /// The window ``maxRefreshes`` applies to.
    public var refreshWindow: Duration { store.refreshWindow }

    // The credential is kept type-erased in a non-generic store: the generic middleware is called
    // through the chain unspecialised, where every generic type it touched would cost a metadata
    // lookup per request. The store keeps it with the code that applies it (``AppliedCredential``), so
    // that no request casts it back.
    private let store: CredentialStore

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
        store = CredentialStore(
            credential: credential.map { Self.applied($0, by: authenticator) }, maxRefreshes: max(1, maxRefreshes),
            refreshWindow: refreshWindow, clock: clock,
            refresh: { current, context in
                Self.applied(try await authenticator.refresh(current as? A.Credential, context: context), by: authenticator)
            })
    }

    /// `credential` with the code that applies it.
    private static func applied(_ credential: A.Credential, by authenticator: A) -> AppliedCredential {
        AppliedCredential(credential) { request in authenticator.apply(credential, to: &request) }
    }

    /// The credential in use (nil before the first refresh).
    public var credential: A.Credential? { store.current?.credential as? A.Credential }

    // Inlined into the protocol witness: one async frame for the middleware, not two. In the caller's
    // isolation, as the requirement is: no hop to the global executor and back on every call.
    @inline(__always)
    public nonisolated(nonsending) func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        guard authenticator.authenticates(request, context: context) else {
            return try await next(request, context, handler: handler)
        }
        let (credential, generation) = try await store.credential(context, request: request)
        var authenticated = request
        credential.apply(&authenticated)
        guard request.body?.isReplayable ?? true else {
            return try await next(authenticated, context, handler: handler)
        }
        // The handler's step is the address of the caller's result (nil: refused), not a generic enum: see
        // ``HandedValues``.
        var values = HandedValues<Return>()
        defer { values.release() }
        let delivered = try await next(authenticated, context) { head, body throws(CurlewError) -> UnsafeMutableRawPointer? in
            if self.authenticator.isAuthenticationFailure(head, for: request) { return nil }
            return values.keep(try await handler(head, body))
        }
        guard let delivered else {
            return try await replay(request, context: context, refusedGeneration: generation, next: next, handler: handler)
        }
        return values.take(delivered)
    }

    /// The one replay of a request whose credential (of `refusedGeneration`) was refused, with a newer one.
    @inline(never)
    nonisolated(nonsending) private func replay<Return>(
        _ request: TransportRequest, context: MiddlewareContext, refusedGeneration: Int, next: MiddlewareNext,
        handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        context.logger.debug("the credential was refused; replaying with a new one")
        let (renewed, _) = try await store.credential(newerThan: refusedGeneration, context, request: request)
        var replay = request
        renewed.apply(&replay)
        var context = context
        context.attempt += 1
        return try await next(replay, context, handler: handler)
    }
}

/// A credential and the code that applies it, made where the authenticator's type is known.
final class AppliedCredential: Sendable {
    let credential: any AuthenticationCredential
    private let applying: @Sendable (inout TransportRequest) -> Void

    init(_ credential: any AuthenticationCredential, applying: @escaping @Sendable (inout TransportRequest) -> Void) {
        self.credential = credential
        self.applying = applying
    }

    /// Adds the credential to `request`, as the authenticator's `apply` does.
    @inline(__always)
    func apply(_ request: inout TransportRequest) {
        applying(&request)
    }
}

/// The credential, its generation and the refresh in flight, for one ``AuthenticationMiddleware``.
final class CredentialStore: Sendable {
    typealias Refresh = @Sendable (
        (any AuthenticationCredential)?, MiddlewareContext
    ) async throws -> AppliedCredential

    let maxRefreshes: Int
    let refreshWindow: Duration
    private let clock: any MiddlewareClock
    private let refresh: Refresh

    private struct State {
        var credential: AppliedCredential?
        /// Incremented by every successful refresh: tells a request whether the credential it was
        /// refused with is still the current one.
        var generation = 0
        var flight: RefreshFlight?
        var refreshes: [ContinuousClock.Instant] = []
    }

    private let state: Locked<State>

    init(
        credential: AppliedCredential?, maxRefreshes: Int, refreshWindow: Duration,
        clock: any MiddlewareClock, refresh: @escaping Refresh
    ) {
        self.maxRefreshes = maxRefreshes
        self.refreshWindow = refreshWindow
        self.clock = clock
        self.refresh = refresh
        state = Locked(State(credential: credential))
    }

    var current: AppliedCredential? { state.withLock { $0.credential } }

    /// What a step decided under the lock.
    private enum Next {
        case ready(AppliedCredential, Int)
        case wait(RefreshFlight)
    }

    /// The credential to use now: the current one, after any refresh that is running or that it needs.
    // Inlined into the middleware: every request asks, and a credential ready to use needs no frame of its own.
    @inline(__always)
    nonisolated(nonsending) func credential(
        _ context: MiddlewareContext, request: TransportRequest
    ) async throws(CurlewError) -> (AppliedCredential, Int) {
        switch try current(context) {
        case .ready(let credential, let generation): return (credential, generation)
        case .wait(let flight): return try await Self.wait(for: flight, request: request)
        }
    }

    /// The step of ``credential(_:request:)`` under the lock. Not async: the wall-clock date it reads (a
    /// resilient type) is then on the thread's stack, not allocated on the task's.
    private func current(_ context: MiddlewareContext) throws(CurlewError) -> Next {
        let date = clock.date
        return try state.withLock { state throws(CurlewError) -> Next in
            if let flight = state.flight { return .wait(flight) }
            if let credential = state.credential, !credential.credential.requiresRefresh(at: date) {
                return .ready(credential, state.generation)
            }
            return .wait(try startFlight(&state, context: context))
        }
    }

    /// Waits for `flight`'s credential; apart, as a request rarely waits.
    @inline(never)
    private static func wait(for flight: RefreshFlight, request: TransportRequest) async throws(CurlewError) -> (AppliedCredential, Int) {
        try await flight.wait(cancelled: { .transport(.cancelled(request)) })
    }

    /// A credential newer than the one of `generation`: the result of the refresh running, else the
    /// current one when it is newer, else the result of a new refresh.
    func credential(
        newerThan generation: Int, _ context: MiddlewareContext, request: TransportRequest
    ) async throws(CurlewError) -> (AppliedCredential, Int) {
        let next = try state.withLock { state throws(CurlewError) -> Next in
            // A refresh running replaces the current credential too: the replay waits for it.
            if let flight = state.flight { return .wait(flight) }
            if state.generation > generation, let credential = state.credential {
                return .ready(credential, state.generation)
            }
            return .wait(try startFlight(&state, context: context))
        }
        switch next {
        case .ready(let credential, let generation): return (credential, generation)
        case .wait(let flight): return try await flight.wait(cancelled: { .transport(.cancelled(request)) })
        }
    }

    /// Starts a refresh, unless the window is full. Called with the lock held.
    private func startFlight(_ state: inout State, context: MiddlewareContext) throws(CurlewError) -> RefreshFlight {
        let now = clock.now
        state.refreshes.removeAll { now - $0 >= refreshWindow }
        guard state.refreshes.count < maxRefreshes else {
            context.logger.warning(
                "credential refresh limit reached", metadata: ["refreshes": "\(maxRefreshes)", "window": "\(refreshWindow)"])
            throw .underlying(AuthenticationError.refreshLimitReached(maxRefreshes: maxRefreshes, window: refreshWindow), nil)
        }
        state.refreshes.append(now)
        let flight = RefreshFlight()
        state.flight = flight
        let current = state.credential?.credential
        let refresh = self.refresh
        // Its own task: a caller that is cancelled leaves, the refresh goes on for the others.
        Task {
            let result: Result<AppliedCredential, CurlewError>
            context.metrics?.count(ClientMetricNames.refreshes, url: context.endpoint?.url ?? "")
            do {
                result = .success(try await refresh(current, context))
            } catch {
                context.logger.warning("credential refresh failed", metadata: ["error": "\(error)"])
                result = .failure(.underlying(AuthenticationError.refreshFailed(error), nil))
            }
            let outcome = self.state.withLock { state -> Result<(AppliedCredential, Int), CurlewError> in
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
final class RefreshFlight: Sendable {
    typealias Outcome = Result<(AppliedCredential, Int), CurlewError>

    private struct State {
        var outcome: Outcome?
        var waiters: [Int: CheckedContinuation<Outcome, Never>] = [:]
        var next = 0
    }

    private let state = Locked(State())

    func wait(cancelled: @escaping @Sendable () -> CurlewError) async throws(CurlewError) -> (AppliedCredential, Int) {
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
