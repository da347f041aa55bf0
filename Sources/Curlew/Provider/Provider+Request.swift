// Curlew — a target's response collected whole (or into a download's file): the provider's one path
// (`Provider+Attempt.swift`) with a handler that keeps the response.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Provider {
    /// Sends the request for `target` and returns its response.
    ///
    /// The stages run in order: endpoint closure, request closure, plugins' `prepare`, plugins'
    /// `willSend`, the middleware chain (``middleware``, in-flight sharing) and the transport (or a stubbed
    /// target's sample response), validation by the target's `validationType`, plugins' `didReceive`,
    /// plugins' `process`.
    /// None of them runs on the provider's actor.
    ///
    /// Cancelling the calling task cancels the transfer, a delayed stub, a middleware's wait or a
    /// request closure still running; the call then throws ``CurlewError/transport(_:)`` with
    /// ``/CurlewEngine/TransportError/Code/cancelled``, and plugins' `didReceive` sees that failure first.
    ///
    /// - Throws: ``CurlewError``.
    @concurrent
    public nonisolated func request(_ target: Target) async throws(CurlewError) -> ApiResponse {
        // The path inlined (`run`, not `attempt`): no frames of its own for it and for the closure.
        try await run(target, ProviderCall(endpointClosure(target), .collect)) { response, _ in response }
    }

    /// Sends the request for `target` and returns its outcome as a `Result`, never throwing: for code that
    /// switches on success and failure, as Moya's completion closures do.
    ///
    /// ```swift
    /// switch await provider.result(for: .zen) {
    /// case .success(let response): logger.info("zen: \(response.statusCode)")
    /// case .failure(let error): logger.error("zen failed: \(error)")
    /// }
    /// ```
    @concurrent
    public nonisolated func result(for target: Target) async -> Result<ApiResponse, CurlewError> {
        do throws(CurlewError) {
            return .success(try await request(target))
        } catch {
            return .failure(error)
        }
    }

    /// The endpoint the provider's endpoint closure makes for `target` (Moya's `endpoint(_:)`).
    public nonisolated func endpoint(_ target: Target) -> Endpoint {
        endpointClosure(target)
    }
}
