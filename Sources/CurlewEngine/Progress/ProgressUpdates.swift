// Curlew — the progress of a call as an async sequence that runs the call.

/// The progress of one call, as it runs, ending with the response.
///
/// Iterating starts the call; each element is a ``ProgressUpdate``, and the last one is
/// ``TransferProgress/isCompleted`` and carries the response. A failure is thrown by the iterator.
///
/// Updates are coalesced: one at most every 50 ms while bytes move, or sooner when the wire bytes moved
/// by 1% of a known total. Only the newest update is kept for a consumer that is busy, so a slow loop
/// sees the latest value rather than a backlog (and never misses the last element). Leaving the loop
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

    package init(
        run: @escaping @Sendable (ProgressReporter) async throws(Failure) -> Response,
        finalProgress: @escaping @Sendable (ProgressReporter, Response) -> TransferProgress = { reporter, _ in reporter.completed() },
        cancellation: @escaping @Sendable () -> Failure
    ) {
        self.run = run
        self.finalProgress = finalProgress
        self.cancellation = cancellation
    }

    public func makeAsyncIterator() -> Iterator { Iterator(self) }

    /// Runs the call on the first `next()` and hands out its updates.
    public struct Iterator: AsyncIteratorProtocol {
        private let sequence: ProgressUpdates
        private var updates: AsyncThrowingStream<Element, any Error>.Iterator?
        private var finished = false

        init(_ sequence: ProgressUpdates) {
            self.sequence = sequence
        }

        public mutating func next() async throws(Failure) -> Element? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Failure) -> Element? {
            guard !finished else { return nil }
            if updates == nil { updates = start() }
            do {
                if let update = try await updates?.next(isolation: actor) {
                    if update.response != nil { finished = true }
                    return update
                }
            } catch {
                finished = true
                throw error as? Failure ?? sequence.cancellation()
            }
            // The stream ended without the last update: the iterating task was cancelled.
            finished = true
            throw sequence.cancellation()
        }

        private func start() -> AsyncThrowingStream<Element, any Error>.Iterator {
            let (stream, continuation) = AsyncThrowingStream<Element, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
            let reporter = ProgressReporter { progress in
                continuation.yield(ProgressUpdate(progress: progress, response: nil))
            }
            let sequence = self.sequence
            // Unstructured, because the call must outlive each `next()`; it is tied to the iteration
            // instead: the stream's end (the consumer left or was cancelled) cancels it.
            let call = Task {
                do throws(Failure) {
                    let response = try await sequence.run(reporter)
                    continuation.yield(ProgressUpdate(progress: sequence.finalProgress(reporter, response), response: response))
                    continuation.finish()
                } catch {
                    reporter.close()
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in call.cancel() }
            return stream.makeAsyncIterator()
        }
    }
}
