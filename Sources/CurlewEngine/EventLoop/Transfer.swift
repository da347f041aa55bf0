// Curlew — one request's hand-over between the calling task and the loop thread.

/// The part of a transfer shared between the calling task and the loop thread.
///
/// It holds the continuation, the cancellation flag and the outcome under one lock, so that the
/// continuation is resumed exactly once whichever of submission, completion, cancellation or shutdown
/// comes first, and the outcome built on the loop thread reaches the task through that lock (which the
/// thread sanitizer sees, unlike the concurrency runtime's own ordering).
final class Transfer: Sendable {
    typealias Outcome = TransferOutcome
    typealias Continuation = UnsafeContinuation<Void, Never>

    private struct State {
        var continuation: Continuation?
        var cancelled = false
        /// The loop holds (or is about to hold) the transfer: a cancellation must reach it.
        var held = false
        var finished = false
        var outcome: Outcome?
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
    /// The streamed parts of the exchange; nil for the common case, a body in memory both ways.
    let streams: TransferStreams?
    private let state = Locked(State())

    init(
        request: PreparedRequest, deadline: UInt64?, isRedirectHop: Bool = false, submitted: UInt64 = MonotonicClock.now(),
        streams: TransferStreams? = nil
    ) {
        self.request = request
        self.deadline = deadline
        self.isRedirectHop = isRedirectHop
        self.submitted = submitted
        self.streams = streams
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
                state.outcome = .failure(request.error(.cancelled, "the task was cancelled"))
                return true
            }
            state.continuation = continuation
            state.held = true
            return false
        }
        if cancelled { continuation.resume() }
        return !cancelled
    }

    /// For a streamed response, whose caller waits on the ``ResponseStream`` instead: marks the transfer
    /// held. Returns false, having ended the stream with a cancellation, when the task was cancelled
    /// before the transfer could be handed to the loop.
    func attachStreamed() -> Bool {
        let cancelled = state.withLock { state -> Bool in
            if state.cancelled {
                state.finished = true
                return true
            }
            state.held = true
            return false
        }
        if cancelled { streams?.end(with: request.error(.cancelled, "the task was cancelled")) }
        return !cancelled
    }

    /// Marks the transfer cancelled. Returns true when the loop holds it and must be told to abort it.
    func markCancelled() -> Bool {
        state.withLock { state in
            state.cancelled = true
            return state.held && !state.finished
        }
    }

    /// Whether the calling task has asked to cancel.
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Stores the outcome and resumes the caller. Later calls do nothing. A streamed response gets a
    /// failure through its stream (its success is delivered by the loop as the bytes arrive).
    func finish(_ outcome: Outcome) {
        let continuation = state.withLock { state -> Continuation? in
            guard !state.finished else { return nil }
            state.finished = true
            state.outcome = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        if let streams {
            if case .failure(let error) = outcome { streams.end(with: error) } else { streams.request?.close() }
        }
        continuation?.resume()
    }

    /// Marks the transfer finished without an outcome (a streamed response the loop has ended itself).
    func markFinished() {
        state.withLock { $0.finished = true }
    }

    /// The outcome, once the caller has been resumed.
    func takeOutcome() -> Outcome {
        state.withLock { state in
            defer { state.outcome = nil }
            // Resumed only after an outcome was stored; the fallback keeps a broken invariant typed.
            return state.outcome ?? .failure(request.error(.cancelled, "the transfer ended without an outcome"))
        }
    }
}

/// How a transfer ended. One reference wide (`indirect` failure; the response is itself one reference),
/// so handing it over moves a pointer: a `Result` carrying the error inline went
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
