// Curlew — a provider call that reports its progress as it runs.

extension Provider {
    /// Sends the request for `target` as ``request(_:)`` does, when iterated, reporting the transfer's
    /// progress; the last element carries the ``ApiResponse``.
    ///
    /// Every stage runs as for ``request(_:)`` (plugins, middleware, validation); the counts are those of
    /// the transfer (a retry or a redirect starts them again). A stubbed call, and a call through a
    /// transport other than ``/CurlewEngine/CurlSession`` (which has no transfer to count), reports only
    /// its last element. Failures are thrown as ``CurlewError``; leaving the loop early or cancelling the task
    /// iterating cancels the call. See ``/CurlewEngine/ProgressUpdates`` for the coalescing rule.
    public nonisolated func progress(for target: Target) -> ProgressUpdates<ApiResponse, CurlewError> {
        let endpoint = endpointClosure(target)
        return ProgressUpdates(
            run: { reporter throws(CurlewError) in
                try await self.send(endpoint, target: target, progress: reporter).get()
            },
            finalProgress: { reporter, response in reporter.completed(decoded: response.data.count) },
            cancellation: { .transport(TransportError(.cancelled, message: "the task was cancelled", url: endpoint.url)) })
    }
}
