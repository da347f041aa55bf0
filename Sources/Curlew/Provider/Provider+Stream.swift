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
        if stub != .never {
            return try await streamStub(
                stub, endpoint: endpoint, request: request, target: target, isolation: isolation, handler)
        }
        let codes = target.validationType.statusCodes
        var handing = false
        do {
            return try await session.perform(request, isolation: isolation) { head, body in
                let result = Self.validate(.success(ApiResponse(head: head, request: request)), codes: codes)
                let processed = await finishing(result, target: target)
                let response = try processed.get()
                handing = true
                return try await handler(response, response.isStreamed ? body : ResponseBody(data: response.data))
            }
        } catch {
            // Validation and the plugins' failures (which they have seen), and the handler's errors, as
            // they are; a failure before the head reaches the plugins first, as it does for `request`.
            guard !handing, !(error is CurlewError) else { throw error }
            let failure: CurlewError = (error as? TransportError).map { .transport($0) } ?? .underlying(error, nil)
            let processed = await finishing(.failure(failure), target: target)
            let response = try processed.get()
            return try await handler(response, ResponseBody(data: response.data))
        }
    }

    /// A stubbed target's stream: its sample response's head through validation and the plugins, then
    /// its sample data as the body.
    private func streamStub<Return>(
        _ stub: StubBehavior, endpoint: Endpoint, request: TransportRequest, target: Target,
        isolation: isolated (any Actor)?, _ handler: (ApiResponse, ResponseBody) async throws -> Return
    ) async throws -> Return {
        if case .delayed(let delay) = stub {
            do {
                try await Task.sleep(for: delay)
            } catch {
                throw await finish(.failure(.transport(Self.cancelled(request))), target: target)
            }
        }
        var data = Data()
        let result = Self.stubResponse(endpoint, request: request).map { response in
            data = response.data
            return ApiResponse(streamedStub: response)
        }
        let processed = await finishing(Self.validate(result, codes: target.validationType.statusCodes), target: target)
        let response = try processed.get()
        return try await handler(response, ResponseBody(data: response.isStreamed ? data : response.data))
    }

    /// Runs the plugins' `didReceive` and `process` on `result`.
    private nonisolated func finishing(
        _ result: Result<ApiResponse, CurlewError>, target: Target
    ) async -> Result<ApiResponse, CurlewError> {
        var result = result
        for plugin in plugins { await plugin.didReceive(result, target: target) }
        for plugin in plugins { result = await plugin.process(result, target: target) }
        return result
    }

    /// The error thrown for a failure the plugins have seen (a plugin may have replaced it).
    private nonisolated func finish(_ result: Result<ApiResponse, CurlewError>, target: Target) async -> CurlewError {
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
