// Curlew — what the state machine tells the loop thread to do, and how it names transfers.

/// One submission known to the state machine: a slot and the generation of its use, so an event about
/// a transfer that has already ended (a late cancellation, a stale timer) is recognised and ignored.
struct TransferID: Hashable, Sendable, CustomStringConvertible {
    let slot: UInt32
    let generation: UInt32

    var description: String { "#\(slot).\(generation)" }
}

/// Why the state machine ends a transfer itself.
enum EndReason: Hashable, Sendable {
    /// The calling task was cancelled.
    case cancelled
    /// The total timeout expired (queued time included).
    case totalTimeout
    /// No byte moved for the idle timeout.
    case idleTimeout
    /// The session shut down.
    case shutdown
    /// Submitted after a graceful shutdown began: refused, never sent.
    case refused
    /// Still waiting for admission when a graceful shutdown began: never started.
    case queuedAtShutdown
    /// An event stream running when a graceful shutdown began: such streams end at once.
    case eventStreamAtShutdown
    /// Still running (or waiting) when the graceful shutdown's deadline passed.
    case shutdownDeadline
}

/// What the loop thread must do after an event.
enum LoopAction<Payload>: CustomStringConvertible {
    /// Hand the transfer to curl on `shard` (open that shard first when it is new); `timeout` is left of
    /// the total timeout, in nanoseconds. `connection`: whether it was admitted to open a new connection
    /// for a multiplexing key (see ``TransferStateMachine/connectionReady(for:now:into:)``) or to probe for
    /// one stream more.
    case start(TransferID, Payload, shard: Int, timeout: UInt64?, connection: ConnectionRole)
    /// End a transfer curl never saw: resume its caller with the reason.
    case fail(Payload, EndReason)
    /// End a transfer curl is running: take it out of curl, then resume its caller with the reason.
    case abort(TransferID, Payload, EndReason)
    /// Tell curl which directions of a running transfer are paused (both, always: libcurl sets both at
    /// once).
    case setPause(TransferID, receive: Bool, send: Bool)
    /// The idle timer of a running transfer is due: report its last activity with
    /// ``TransferStateMachine/idleCheck(_:lastActivity:now:into:)``.
    case checkIdle(TransferID)
    /// Every transfer of a graceful shutdown has ended: the loop stops and tears down.
    case drained

    var description: String {
        switch self {
        case .start(let id, _, let shard, let timeout, let connection):
            "start \(id) shard \(shard) timeout \(timeout.map(String.init) ?? "none")"
                + (connection == .opens ? " opens" : connection == .probes ? " probes" : "")
        case .fail(_, let reason): "fail \(reason)"
        case .abort(let id, _, let reason): "abort \(id) \(reason)"
        case .setPause(let id, let receive, let send): "setPause \(id) receive \(receive) send \(send)"
        case .checkIdle(let id): "checkIdle \(id)"
        case .drained: "drained"
        }
    }
}
