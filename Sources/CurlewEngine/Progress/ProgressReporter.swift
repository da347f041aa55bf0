// Curlew — the progress of one call, fed by the loop thread and the consuming task.

/// Collects the counts of one call and hands updates to its sequence.
///
/// The loop thread reports only when the coalescing rule lets it (see ``TransferContext/progressed``):
/// at most once per ``interval``, or sooner when the wire bytes moved by ``step`` of a known total.
/// The sequence keeps only the newest update, so a slow consumer sees the latest value.
package final class ProgressReporter: Sendable {
    /// The longest time between two updates while bytes move.
    static let interval: UInt64 = 50_000_000
    /// The share of a known total that makes an update come sooner.
    static let step = 0.01

    private struct State {
        var progress = TransferProgress()
        /// Decoded bytes counted by the consuming task (a streamed body), not the loop thread.
        var decodedByConsumer = 0
        /// The last update was handed out: later reports from the loop are dropped.
        var closed = false
    }

    private let state = Locked(State())
    private let basis: ProgressBasis
    private let emit: @Sendable (TransferProgress) -> Void

    /// A reporter handing each update to `emit` (called under the reporter's lock, so an update can
    /// never follow the last one); its fraction follows the body `basis` names.
    package init(basis: ProgressBasis = .automatic, emit: @escaping @Sendable (TransferProgress) -> Void) {
        self.basis = basis
        self.emit = emit
    }

    /// A transfer of the call starts (the first, or a redirect's or retry's): the counts start again.
    func begin(expectedBytesToSend: Int?) {
        state.withLock { state in
            guard !state.closed else { return }
            state.progress = TransferProgress()
            state.progress.expectedBytesToSend = expectedBytesToSend
            state.decodedByConsumer = 0
        }
    }

    /// The loop thread's counts. `decoded` is nil when the consuming task counts decoded bytes itself.
    func report(sent: Int, received: Int, expectedBytesToReceive: Int?, decoded: Int?, emitting: Bool) {
        state.withLock { state in
            guard !state.closed else { return }
            var progress = state.progress
            progress.bytesSent = max(progress.bytesSent, sent)
            progress.bytesReceived = max(progress.bytesReceived, received)
            if let expectedBytesToReceive { progress.expectedBytesToReceive = expectedBytesToReceive }
            progress.decodedBytesReceived = decoded ?? state.decodedByConsumer
            progress.fractionCompleted = max(progress.fractionCompleted, progress.computedFraction(basis))
            state.progress = progress
            if emitting { emit(progress) }
        }
    }

    /// Decoded bytes the consuming task took from a streamed body.
    package func addDecoded(_ count: Int) {
        state.withLock { state in
            state.decodedByConsumer += count
        }
    }

    /// The last update: the counts as they ended, completed. `decoded` overrides the decoded count
    /// (the length of a body collected in memory). Later reports are dropped.
    package func completed(decoded: Int? = nil) -> TransferProgress {
        state.withLock { state in
            state.closed = true
            var progress = state.progress
            if let decoded { progress.decodedBytesReceived = decoded } else { progress.decodedBytesReceived = max(progress.decodedBytesReceived, state.decodedByConsumer) }
            progress.isCompleted = true
            progress.fractionCompleted = 1
            return progress
        }
    }

    /// Stops updates (the call failed or was cancelled).
    func close() {
        state.withLock { $0.closed = true }
    }
}
