// Curlew — requests and downloads that report their progress as they run.


import HTTPTypes
extension CurlSession {
    /// Runs ``execute(_:)`` when iterated, reporting its progress; the last element carries the response.
    ///
    /// See ``ProgressUpdates`` for the coalescing rule and cancellation. The fraction follows the request
    /// body when it has a known length above zero (an upload), the response body otherwise. The response body's decoded bytes
    /// are counted as curl hands them over, and in the last update they equal the body's length.
    public func executeWithProgress(_ request: TransportRequest) -> ProgressUpdates<TransportResponse, TransportError> {
        ProgressUpdates(
            run: { reporter throws(TransportError) in
                var request = request
                request.options.progressReporter = reporter
                return try await self.execute(request)
            },
            finalProgress: { reporter, response in reporter.completed(decoded: response.body.count) },
            cancellation: { TransportError(.cancelled, message: "the task was cancelled", url: request.url, method: request.method.rawValue) })
    }

    /// Runs ``download(_:to:options:)`` when iterated, reporting its progress; the last element carries
    /// the ``DownloadResponse``. A resumed download counts the bytes of this exchange only.
    public func downloadWithProgress(
        _ request: TransportRequest, to destination: DownloadDestination, options: DownloadOptions = DownloadOptions()
    ) -> ProgressUpdates<DownloadResponse, TransportError> {
        ProgressUpdates(
            run: { reporter throws(TransportError) in
                try await self.download(request, to: destination, options: options, progress: reporter)
            },
            cancellation: { TransportError(.cancelled, message: "the task was cancelled", url: request.url, method: request.method.rawValue) },
            basis: .responseBody)
    }
}
