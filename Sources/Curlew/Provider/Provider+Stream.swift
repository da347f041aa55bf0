// Curlew — a target's response read as it arrives: the same stages as `request`, with the body handed to
// a closure instead of collected.

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
    /// the head arrives, on the head: the response they see is ``ApiResponse/isStreamed`` and its `data`
    /// is empty. Then `handler` runs, with the response as the plugins left it and the body. A stubbed
    /// target streams its sample data. Identical requests in flight never share a streamed transfer.
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
        _ handler: (ApiResponse, ResponseBody) async throws -> Return
    ) async throws -> Return {
        let endpoint = endpointClosure(target)
        let request: TransportRequest
        switch await prepareRequest(endpoint, target: target) {
        case .success(let prepared):
            request = prepared
        case .failure(let error):
            throw await finish(.failure(error), target: target)
        }
        let stub = stubClosure(target)
        if !plugins.isEmpty {
            let shown = stub == .never ? await session.wireRequest(forStreamed: request) : request
            for plugin in plugins { await plugin.willSend(shown, target: target) }
        }
        let codes = target.validationType.statusCodes
        let context = MiddlewareContext(target: target, endpoint: endpoint, logger: logger, collectsBody: false, stub: stub)
        var headArrived = false
        do throws(CurlewError) {
            let chain = MiddlewareNext(members: members, index: 0, transport: session)
            return try await chain(request, context) { head, body throws(CurlewError) in
                headArrived = true
                let result = Self.validate(.success(ApiResponse(head: head, request: request)), codes: codes)
                let response = try await finishing(result, target: target).get()
                do {
                    return try await handler(response, response.isStreamed ? body : ResponseBody(data: response.data))
                } catch {
                    throw .underlying(HandlerFailure(error: error), nil)
                }
            }
        } catch {
            // The handler's errors as they are; validation's and the plugins' failures (which the plugins
            // have seen) too. A failure before the head reaches the plugins first, as it does for `request`.
            if case .underlying(let failure as HandlerFailure, _) = error { throw failure.error }
            guard !headArrived else { throw error }
            let response = try await finishing(.failure(error), target: target).get()
            return try await handler(response, ResponseBody(data: response.data))
        }
    }

    /// Runs the plugins' `didReceive` and `process` on `result`.
    nonisolated func finishing(
        _ result: Result<ApiResponse, CurlewError>, target: Target
    ) async -> Result<ApiResponse, CurlewError> {
        var result = result
        for plugin in plugins { await plugin.didReceive(result, target: target) }
        for plugin in plugins { result = await plugin.process(result, target: target) }
        return result
    }

    /// The error thrown for a failure the plugins have seen (a plugin may have replaced it).
    nonisolated func finish(_ result: Result<ApiResponse, CurlewError>, target: Target) async -> CurlewError {
        switch await finishing(result, target: target) {
        case .failure(let error): return error
        case .success(let response): return .underlying(StreamNotStarted(), response)
        }
    }
}

/// A plugin turned a failure before a stream started into a response; the stream still did not start.
struct StreamNotStarted: Error, CustomStringConvertible {
    var description: String { "the request failed before its response arrived" }
}

/// What a stream's handler threw, carried through the chain to be thrown as it is.
struct HandlerFailure: Error {
    let error: any Error
}
