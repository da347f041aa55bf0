// Cancelling a route's work when its client goes away.

import NIOCore
import Synchronization

/// Runs `operation` in a task of its own, cancelled when `channel` closes (the client went away) or
/// when the calling task is cancelled, and returns its result.
///
/// Hummingbird 2 runs a route on its connection's task and does not cancel it when the client leaves,
/// so an upstream call would run to its end for nobody. The connection's channel closes when the client
/// resets it (RST). A client that only shuts down its sending side (half-close, FIN) keeps the channel
/// open, because Hummingbird allows remote half-closure, and still gets its answer; a client that
/// closes its socket normally sends the same FIN, so it is noticed only when the answer is written.
///
/// The close future is never awaited, only told to cancel: awaiting it would last as long as the
/// keep-alive connection does, and `EventLoopFuture.get()` does not end when its task is cancelled.
///
/// ```swift
/// let result = try await withCancellationOnClose(of: context.channel) {
///     try await api.request(.user(id: id), as: User.self)
/// }
/// ```
///
/// - Parameters:
///   - channel: The request's connection.
///   - operation: The work, for example a call to an upstream.
/// - Returns: What `operation` returned.
/// - Throws: What `operation` threw; a cancelled operation throws what its cancellation makes it throw
///   (Curlew: `CurlewError.transport` with code `cancelled`).
func withCancellationOnClose<Value: Sendable>(
    of channel: any Channel,
    _ operation: sending @escaping @isolated(any) () async throws -> Value
) async throws -> Value {
    let task = Task(operation: operation)
    let watch = ConnectionWatch.of(channel)
    watch.arm { task.cancel() }
    defer { watch.disarm() }
    return try await withTaskCancellationHandler {
        try await task.value
    } onCancel: {
        task.cancel()
    }
}

/// What cancels the work in flight on one connection when the connection closes.
///
/// One per open connection, registered once on its channel's close future: a callback registered per
/// request would stay on the future until the connection closes, and a keep-alive connection (from a
/// load balancer, say) may carry millions of requests. HTTP/1 serves a connection's requests one at a
/// time, so one slot is enough.
final class ConnectionWatch: Sendable {
    private enum State {
        case open(cancel: (@Sendable () -> Void)?)
        case closed
    }

    private let state = Mutex(State.open(cancel: nil))

    /// The watches of the open connections.
    private static let watches = Mutex<[ObjectIdentifier: ConnectionWatch]>([:])

    /// The watch of `channel`, made and registered on its close future on first use.
    static func of(_ channel: any Channel) -> ConnectionWatch {
        let id = ObjectIdentifier(channel)
        let (watch, isNew) = watches.withLock { watches in
            if let watch = watches[id] { return (watch, false) }
            let watch = ConnectionWatch()
            watches[id] = watch
            return (watch, true)
        }
        if isNew {
            // Runs at once if the channel has already closed; always before the channel is freed, so
            // its identifier is not reused while still in the table.
            channel.closeFuture.whenComplete { _ in
                watches.withLock { _ = $0.removeValue(forKey: id) }
                watch.close()
            }
        }
        return watch
    }

    /// Runs `cancel` when the connection closes, or now if it has closed.
    func arm(_ cancel: @escaping @Sendable () -> Void) {
        let isClosed = state.withLock { state in
            guard case .open = state else { return true }
            state = .open(cancel: cancel)
            return false
        }
        if isClosed { cancel() }
    }

    /// Forgets the work armed: it has ended.
    func disarm() {
        state.withLock { state in
            if case .open = state { state = .open(cancel: nil) }
        }
    }

    private func close() {
        let cancel = state.withLock { state -> (@Sendable () -> Void)? in
            defer { state = .closed }
            guard case .open(let cancel) = state else { return nil }
            return cancel
        }
        cancel?()
    }
}
