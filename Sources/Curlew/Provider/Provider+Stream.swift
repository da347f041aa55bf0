// Curlew — a target's response read as it arrives: the provider's one path (`Provider+Attempt.swift`),
// with the body handed to the caller's closure instead of collected.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Provider {
    /// Sends the request for `target` and hands its response and body, read as it arrives, to `handler`;
    /// returns what `handler` returns.
    ///
    /// The stages are those of ``request(_:)``: endpoint closure, request closure, plugins' `prepare` and
    /// `willSend`, the transfer (or the stub), validation, plugins' `didReceive` and `process` — run when
    /// the head arrives, on the head: the response they see is ``ApiResponse/Origin/streamedHead`` and its
    /// `data` is empty. Then `handler` runs, with the response as the plugins left it and the body. A
    /// stubbed target streams its sample data. A failure the plugins turn into a response (their
    /// `process`) reaches `handler` too, with that response's data as the body. Identical requests in
    /// flight never share a streamed transfer.
    ///
    /// ```swift
    /// try await provider.stream(.export(id)) { response, body in
    ///     for try await chunk in body { try await file.write(chunk) }
    /// }
    /// ```
    ///
    /// The body is valid only inside `handler`; returning (or throwing) before its last byte, or
    /// cancelling the calling task, aborts the transfer and closes its connection.
    ///
    /// - Throws: ``CurlewError`` for what fails before `handler` runs (building the request, the
    ///   transfer, validation, a plugin); inside `handler`, reading the body throws
    ///   ``/CurlewEngine/TransportError``, and what `handler` throws is thrown as it is.
    public func stream<Return>(
        _ target: Target, isolation: isolated (any Actor)? = #isolation,
        _ handler: (ApiResponse, ResponseBodyStream) async throws -> Return
    ) async throws -> Return {
        do throws(CurlewError) {
            return try await attempt(target, ProviderCall(endpointClosure(target), .stream)) {
                response, body throws(CurlewError) in
                do {
                    return try await handler(response, body ?? ResponseBodyStream(data: response.data))
                } catch {
                    // Carried through the chain untouched, to be thrown as it is.
                    throw .underlying(HandlerFailure(error: error), nil)
                }
            }
        } catch {
            if case .underlying(let failure as HandlerFailure, _) = error { throw failure.error }
            throw error
        }
    }
}

/// What a stream's handler threw, carried through the chain to be thrown as it is.
struct HandlerFailure: Error {
    let error: any Error
}
