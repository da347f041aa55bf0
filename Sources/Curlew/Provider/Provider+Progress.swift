// Curlew — a provider call that reports its progress as it runs.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CurlewJSON

extension Provider {
    /// Sends the request for `target` as ``request(_:)`` does, when iterated, reporting the transfer's
    /// progress; the last element carries the ``ApiResponse``.
    ///
    /// Moya's `request(_:progress:completion:)` (and `requestWithProgress` in its reactive extensions) as an
    /// async sequence: `for try await update in provider.progress(for: .upload(file))` reads as what it does.
    /// Uploads report ``/CurlewEngine/TransferProgress/bytesSent``, downloads
    /// ``/CurlewEngine/TransferProgress/bytesReceived``; as in Moya, `fractionCompleted` follows the request
    /// body for the upload tasks (`uploadFile`, `uploadMultipart`, `uploadCompositeMultipart`) and the
    /// response body for every other task.
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
                try await self.attempt(target, ProviderCall(endpoint, .collect, progress: reporter)) { response, _ in response }
            },
            finalProgress: { reporter, response in reporter.completed(decoded: Self.decodedSize(response)) },
            cancellation: { .transport(TransportError(.cancelled, message: "the task was cancelled", url: endpoint.url)) },
            basis: target.task.progressBasis)
    }

    /// ``progress(for:)`` whose last element carries the response decoded by status code, as
    /// ``request(_:as:errorMessage:decoder:)`` decodes it.
    ///
    /// ```swift
    /// for try await update in provider.progress(for: .upload(photo), as: Photo.self) {
    ///     if let result = update.response { return result }
    ///     logger.info("uploaded \(update.progress.bytesSent) of \(update.progress.expectedBytesToSend ?? 0)")
    /// }
    /// ```
    public nonisolated func progress<Value: Decodable & Sendable, Message: Decodable & Sendable>(
        for target: Target, as type: Value.Type, errorMessage: Message.Type = ApiErrorMessage.self,
        decoder: JSONDecoder? = nil
    ) -> ProgressUpdates<ApiResult<Value, Message>, CurlewError> {
        let endpoint = endpointClosure(target)
        let bodyDecoder = decoder.map(JSONBodyDecoder.init) ?? self.bodyDecoder
        return ProgressUpdates(
            run: { reporter throws(CurlewError) in
                let response = try await self.attempt(target, ProviderCall(endpoint, .collect, progress: reporter)) {
                    response, _ in response
                }
                return try ApiResult<Value, Message>.decode(from: response, with: bodyDecoder)
            },
            finalProgress: { reporter, result in reporter.completed(decoded: Self.decodedSize(result.response)) },
            cancellation: { .transport(TransportError(.cancelled, message: "the task was cancelled", url: endpoint.url)) },
            basis: target.task.progressBasis)
    }

    /// The body's decoded size: the data's, or the downloaded file's.
    private static func decodedSize(_ response: ApiResponse?) -> Int? {
        guard let response else { return nil }
        return response.download?.fileSize ?? response.data.count
    }
}
