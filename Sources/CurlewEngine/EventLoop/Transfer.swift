// Curlew — one request's hand-over between the calling task and the loop thread.

/// The part of a transfer shared between the calling task and the loop thread.
///
/// It holds the continuation and the cancellation flag under one lock, so that the continuation is
/// resumed exactly once whichever of submission, completion, cancellation or shutdown comes first.
final class Transfer: Sendable {
    typealias Outcome = TransferOutcome
    typealias Continuation = UnsafeContinuation<Outcome, Never>

    private struct State {
        var continuation: Continuation?
        var cancelled = false
        var finished = false
        /// The loop's identifier, once the loop has taken the submission.
        var id: TransferID?
    }

    let request: PreparedRequest
    /// The absolute total-timeout deadline (monotonic nanoseconds), shared by every redirect hop.
    let deadline: UInt64?
    /// Whether this is a redirect hop of a request that was already admitted once.
    let isRedirectHop: Bool
    /// When the caller handed the transfer over (monotonic nanoseconds).
    let submitted: UInt64
    private let state = Locked(State())

    init(request: PreparedRequest, deadline: UInt64?, isRedirectHop: Bool = false, submitted: UInt64 = MonotonicClock.now()) {
        self.request = request
        self.deadline = deadline
        self.isRedirectHop = isRedirectHop
        self.submitted = submitted
    }

    /// Records the loop's identifier. Returns true when the task was cancelled in the meantime, so the
    /// loop cancels at once (the cancellation handler saw no identifier to ask for).
    func register(_ id: TransferID) -> Bool {
        state.withLock { state in
            state.id = id
            return state.cancelled
        }
    }

    /// The loop's identifier, once registered.
    var registeredID: TransferID? { state.withLock { $0.id } }

    /// Stores the continuation. Returns false, having resumed it with a cancellation, when the task was
    /// cancelled before the transfer could be handed to the loop.
    func attach(_ continuation: Continuation) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            if state.cancelled {
                state.finished = true
                return true
            }
            state.continuation = continuation
            return false
        }
        if cancelled { continuation.resume(returning: .failure(request.error(.cancelled, "the task was cancelled"))) }
        return !cancelled
    }

    /// Marks the transfer cancelled. Returns true when the loop holds it and must be told to abort it.
    func markCancelled() -> Bool {
        state.withLock { state in
            state.cancelled = true
            return state.continuation != nil && !state.finished
        }
    }

    /// Whether the calling task has asked to cancel.
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Resumes the caller with the outcome. Later calls do nothing.
    func finish(_ outcome: Outcome) {
        let continuation = state.withLock { state -> Continuation? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: outcome)
    }
}

/// How a transfer ended. One reference wide (`indirect` failure; the response is itself one reference),
/// so handing it through the continuation moves a pointer: a `Result` carrying the error inline went
/// through generic value-witness copies on the loop thread (measured: about 1,000 instructions per
/// request).
enum TransferOutcome: Sendable {
    case success(TransportResponse)
    indirect case failure(TransportError)

    /// The response, or the error thrown.
    func get() throws(TransportError) -> TransportResponse {
        switch self {
        case .success(let response): return response
        case .failure(let error): throw error
        }
    }
}
