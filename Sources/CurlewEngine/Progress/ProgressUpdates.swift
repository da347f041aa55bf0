// Curlew — the progress of a call as an async sequence that runs the call.

/// The progress of one call, as it runs, ending with the response.
///
/// Iterating starts the call; each element is a ``ProgressUpdate``, and the last one is
/// ``TransferProgress/isCompleted`` and carries the response. A failure is thrown by the iterator.
///
/// Updates are coalesced: one at most every 50 ms while bytes move, or sooner when the wire bytes moved
/// by 1% of a known total; counts held back are reported when the 50 ms end, even if nothing moves after
/// them. No update comes before a byte moves, and the counts a body ended with are an update of their
/// own before the completed one. Only the newest update is kept for a consumer that is busy, so a slow
/// loop sees the latest value rather than a backlog, and never misses the last counts or the last element. Leaving the loop
/// early, or cancelling the task iterating, cancels the call (its transfer is aborted and its connection
/// closed); the iterator then throws a cancellation error.
///
/// ```swift
/// for try await update in session.executeWithProgress(request) {
///     logger.debug("export: \(update.progress)")
///     if let response = update.response { return response }
/// }
/// ```
///
/// Iterate it once: each iteration runs the call again.
public struct ProgressUpdates<Response: Sendable, Failure: Error>: AsyncSequence, Sendable {
    public typealias Element = ProgressUpdate<Response>

    /// Runs the call with the reporter its transfers report to, and returns its response.
    let run: @Sendable (ProgressReporter) async throws(Failure) -> Response
    /// The last progress, from the reporter and the response.
    let finalProgress: @Sendable (ProgressReporter, Response) -> TransferProgress
    /// The error thrown when the call ended without a response or an error of its own (cancellation).
    let cancellation: @Sendable () -> Failure
    /// Which body ``TransferProgress/fractionCompleted`` follows.
    let basis: ProgressBasis

    package init(
        run: @escaping @Sendable (ProgressReporter) async throws(Failure) -> Response,
        finalProgress: @escaping @Sendable (ProgressReporter, Response) -> TransferProgress = { reporter, _ in reporter.completed() },
        cancellation: @escaping @Sendable () -> Failure, basis: ProgressBasis = .automatic
    ) {
        self.basis = basis
        self.run = run
        self.finalProgress = finalProgress
        self.cancellation = cancellation
    }

    public func makeAsyncIterator() -> Iterator { Iterator(self) }

    /// Runs the call on the first `next()` and hands out its updates.
    public struct Iterator: AsyncIteratorProtocol {
        private let sequence: ProgressUpdates
        private var running: RunningCall<Element, Failure>?
        private var finished = false

        init(_ sequence: ProgressUpdates) {
            self.sequence = sequence
        }

        public mutating func next() async throws(Failure) -> Element? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Failure) -> Element? {
            guard !finished else { return nil }
            if running == nil { running = start() }
            guard let running else { return nil }
            switch await running.channel.next() {
            case .update(let update):
                return update
            case .last(let update):
                finished = true
                return update
            case .failure(let error):
                finished = true
                throw error
            case .end:
                // The iterating task was cancelled before the call ended.
                finished = true
                running.call.cancel()
                throw sequence.cancellation()
            }
        }

        private func start() -> RunningCall<Element, Failure> {
            let channel = ProgressChannel<Element, Failure>()
            // Weakly: a response keeps its request, whose options keep this reporter, so a strong capture
            // would close channel → last update → response → reporter → channel into a cycle that kept
            // every response of a progress call alive (found by LeakSanitizer).
            let reporter = ProgressReporter(basis: sequence.basis) { [weak channel] progress in
                channel?.yield(ProgressUpdate(progress: progress, response: nil))
            }
            let sequence = self.sequence
            // Unstructured, because the call must outlive each `next()`; it is tied to the iteration
            // instead: the iterator's end (the consumer left or was cancelled) cancels it.
            let call = Task {
                do throws(Failure) {
                    let response = try await sequence.run(reporter)
                    channel.finish(.last(ProgressUpdate(progress: sequence.finalProgress(reporter, response), response: response)))
                } catch {
                    reporter.close()
                    channel.finish(.failure(error))
                }
            }
            return RunningCall(channel: channel, call: call)
        }
    }
}

/// The call an iterator started: cancelled when the iterator goes away before the call ended.
final class RunningCall<Element: Sendable, Failure: Error> {
    let channel: ProgressChannel<Element, Failure>
    let call: Task<Void, Never>

    init(channel: ProgressChannel<Element, Failure>, call: Task<Void, Never>) {
        self.channel = channel
        self.call = call
    }

    deinit {
        channel.finish(.end)
        call.cancel()
    }
}
