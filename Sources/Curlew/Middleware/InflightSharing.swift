// Curlew — the chain's member that lets identical requests in flight share one exchange.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The member of a provider's chain (``Provider/trackInflights``) through which identical requests in
/// flight at the same time share one exchange: the first caller's goes through the rest of the chain,
/// the others wait for its complete response and each reads it with its own handler.
///
/// Only GET and HEAD requests whose callers collect the body are shared, and only when everything that
/// shapes the exchange is the same (``InflightKey``).
final class InflightSharing: TransportMiddleware {
    private let table = Locked<[InflightKey: InflightCall]>([:])

    /// The number of shared exchanges in flight.
    var count: Int { table.withLock { $0.count } }

    func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        // Uploads and downloads never share: each caller's file or form is its own.
        guard context.collectsBody, context.endpoint?.task.isTransfer != true, let key = InflightKey(request, stub: context.stub)
        else {
            return try await next(request, context, handler: handler)
        }
        let (call, ticket) = join(key, request: request, context: context, next: next)
        let response = try await call.wait(ticket: ticket, cancelled: { .transport(.cancelled(request)) }).get()
        let body = ResponseBodyStream(response: response)
        defer { body.endScope() }
        return try await handler(ResponseHead(response), body)
    }

    /// Joins the call in flight for `key`, or starts one.
    private func join(
        _ key: InflightKey, request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext
    ) -> (InflightCall, Int) {
        let (call, ticket, isNew) = table.withLock { table -> (InflightCall, Int, Bool) in
            if let call = table[key], let ticket = call.reserve() { return (call, ticket, false) }
            let call = InflightCall()
            table[key] = call
            return (call, call.reserve() ?? 0, true)
        }
        guard isNew else { return (call, ticket) }
        call.start({
            do throws(CurlewError) {
                return .success(
                    try await next(request, context) { head, body throws(CurlewError) in
                        try await body.completeResponse(head: head)
                    })
            } catch {
                return .failure(error)
            }
        }, done: { [weak self] in
            self?.table.withLock { table in
                if table[key] === call { table[key] = nil }
            }
        })
        return (call, ticket)
    }
}

/// What makes two requests the same exchange: method, URL, header fields, options and body (a JSON
/// body by content, see ``RequestIdentity``), the total timeout, the redirect policy and whether it is
/// stubbed. Requests that differ in anything that changes the exchange never share it.
struct InflightKey: Hashable, Sendable {
    let identity: RequestIdentity
    let timeout: Duration?
    let redirects: RedirectPolicy.Identity?
    let stub: StubBehavior

    /// Only GET and HEAD requests with in-memory (or no) bodies without trailers are shared; others
    /// return nil.
    init?(_ request: TransportRequest, stub: StubBehavior) {
        guard request.method == .get || request.method == .head else { return nil }
        if let body = request.body, body.inMemoryBytes == nil || body.hasTrailers { return nil }
        identity = RequestIdentity(request)
        timeout = request.timeout
        redirects = request.redirectPolicy?.identity
        self.stub = stub
    }
}

/// A shared transfer and the callers waiting for it.
///
/// Each caller waits on its own continuation, so a caller that is cancelled leaves at once without
/// disturbing the others; when the last caller leaves, the shared transfer is cancelled.
final class InflightCall: Sendable {
    typealias Outcome = Result<TransportResponse, CurlewError>

    private struct State {
        /// Callers that joined and have not left.
        var members: Set<Int> = []
        var waiters: [Int: UnsafeContinuation<Outcome, Never>] = [:]
        var nextWaiter = 0
        var outcome: Outcome?
        var transfer: Task<Void, Never>?
    }

    private let state = Locked(State())

    /// Starts the shared transfer; `done` runs when it has finished, before any waiter is resumed.
    func start(_ operation: @escaping @Sendable () async -> Outcome, done: @escaping @Sendable () -> Void) {
        let task = Task {
            let outcome = await operation()
            // Leave the table before anyone hears the outcome, so a caller that has its
            // result never still sees this call in flight (and a new identical request starts afresh).
            done()
            let waiters = self.state.withLock { state -> [UnsafeContinuation<Outcome, Never>] in
                state.outcome = outcome
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume(returning: outcome) }
        }
        let abandoned = state.withLock { state -> Bool in
            state.transfer = task
            return state.members.isEmpty && state.outcome == nil
        }
        if abandoned { task.cancel() }  // every caller left before the task was recorded
    }

    /// Reserves a place for a caller. Returns nil when the call has already finished.
    func reserve() -> Int? {
        state.withLock { state in
            guard state.outcome == nil else { return nil }
            defer { state.nextWaiter += 1 }
            state.members.insert(state.nextWaiter)
            return state.nextWaiter
        }
    }

    /// Waits for the shared outcome; a cancelled caller gets a cancellation at once.
    func wait(ticket: Int, cancelled: @escaping @Sendable () -> CurlewError) async -> Outcome {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                let ready = state.withLock { state -> Outcome? in
                    if let outcome = state.outcome { return outcome }
                    guard state.members.contains(ticket) else { return .failure(cancelled()) }  // left already
                    state.waiters[ticket] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            leave(ticket, cancelled: cancelled)
        }
    }

    /// A cancelled caller leaves; the last one to leave cancels the shared transfer.
    private func leave(_ ticket: Int, cancelled: @Sendable () -> CurlewError) {
        let (waiter, transfer) = state.withLock { state -> (UnsafeContinuation<Outcome, Never>?, Task<Void, Never>?) in
            guard state.outcome == nil, state.members.remove(ticket) != nil else { return (nil, nil) }
            let waiter = state.waiters.removeValue(forKey: ticket)
            return (waiter, state.members.isEmpty ? state.transfer : nil)
        }
        waiter?.resume(returning: .failure(cancelled()))
        transfer?.cancel()
    }
}
