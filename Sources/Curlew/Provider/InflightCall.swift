// Curlew — one transfer shared by identical requests in flight at the same time.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What makes two requests identical for sharing: method, URL, header fields, options and body (a JSON
/// body by content, see ``RequestIdentity``).
struct InflightKey: Hashable, Sendable {
    let identity: RequestIdentity

    /// Only GET and HEAD requests with in-memory (or no) bodies are shared; others return nil.
    init?(_ request: TransportRequest) {
        guard request.method == .get || request.method == .head else { return nil }
        if let body = request.body, body.inMemoryBytes == nil { return nil }
        identity = RequestIdentity(request)
    }
}

/// A shared transfer and the callers waiting for it.
///
/// Each caller waits on its own continuation, so a caller that is cancelled leaves at once without
/// disturbing the others; when the last caller leaves, the shared transfer is cancelled.
final class InflightCall: Sendable {
    typealias Outcome = Result<TransportResponse, TransportError>

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
    func start(_ operation: @escaping @Sendable () async -> Outcome, done: @escaping @Sendable () async -> Void) {
        let task = Task {
            let outcome = await operation()
            // Leave the provider's table before anyone hears the outcome, so a caller that has its
            // result never still sees this call in flight (and a new identical request starts afresh).
            await done()
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
    func wait(ticket: Int, cancelled: @escaping @Sendable () -> TransportError) async -> Outcome {
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
    private func leave(_ ticket: Int, cancelled: @Sendable () -> TransportError) {
        let (waiter, transfer) = state.withLock { state -> (UnsafeContinuation<Outcome, Never>?, Task<Void, Never>?) in
            guard state.outcome == nil, state.members.remove(ticket) != nil else { return (nil, nil) }
            let waiter = state.waiters.removeValue(forKey: ticket)
            return (waiter, state.members.isEmpty ? state.transfer : nil)
        }
        waiter?.resume(returning: .failure(cancelled()))
        transfer?.cancel()
    }
}

extension Provider {
    /// Joins (or starts) the shared transfer for `key` and waits for its outcome.
    nonisolated func sharedTransfer(
        _ request: TransportRequest, key: InflightKey
    ) async -> Result<TransportResponse, TransportError> {
        let (call, ticket) = await join(key, request: request)
        return await call.wait(ticket: ticket, cancelled: { Self.cancelled(request) })
    }

    private func join(_ key: InflightKey, request: TransportRequest) -> (InflightCall, Int) {
        if let call = inflight[key], let ticket = call.reserve() { return (call, ticket) }
        let call = InflightCall()
        let ticket = call.reserve() ?? 0
        inflight[key] = call
        let session = self.session
        call.start({
            do throws(TransportError) {
                return .success(try await session.execute(request))
            } catch {
                return .failure(error)
            }
        }, done: { [weak self] in
            await self?.finished(key, call: call)
        })
        return (call, ticket)
    }

    private func finished(_ key: InflightKey, call: InflightCall) {
        if inflight[key] === call { inflight[key] = nil }
    }
}
