// Curlew — a request's journey: endpoint, request, plugins, transport or stub, validation, plugins.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Provider {
    /// Sends the request for `target` and returns its response.
    ///
    /// The stages run in order: endpoint closure, request closure, plugins' `prepare`, plugins'
    /// `willSend`, the transfer (or the stub), validation by the target's `validationType`, plugins'
    /// `didReceive`, plugins' `process`. None of them runs on the provider's actor.
    ///
    /// Cancelling the calling task cancels the transfer, a delayed stub or a request closure still
    /// running; the call then throws ``CurlewError/transport(_:)`` with ``/CurlewEngine/TransportError/Code/cancelled``,
    /// and plugins' `didReceive` sees that failure first.
    ///
    /// - Throws: ``CurlewError``.
    @concurrent
    public nonisolated func request(_ target: Target) async throws(CurlewError) -> ApiResponse {
        let endpoint = endpointClosure(target)
        let result = await send(endpoint, target: target)
        return try result.get()
    }

    nonisolated func send(_ endpoint: Endpoint, target: Target) async -> Result<ApiResponse, CurlewError> {
        var result: Result<ApiResponse, CurlewError>
        switch await prepareRequest(endpoint, target: target) {
        case .failure(let error):
            result = .failure(error)
        case .success(let request):
            let stub = stubClosure(target)
            if !plugins.isEmpty {
                // Plugins see what goes on the wire, with the fields the transport adds; a stub sends nothing.
                let shown = stub == .never ? await session.wireRequest(for: request) : request
                for plugin in plugins { await plugin.willSend(shown, target: target) }
            }
            switch stub {
            case .never:
                result = await transfer(request)
            case .immediate:
                result = Self.stubResponse(endpoint, request: request)
            case .delayed(let delay):
                do {
                    try await Task.sleep(for: delay)
                    result = Self.stubResponse(endpoint, request: request)
                } catch {
                    result = .failure(.transport(Self.cancelled(request)))
                }
            }
            result = Self.validate(result, codes: target.validationType.statusCodes)
        }
        for plugin in plugins { await plugin.didReceive(result, target: target) }
        for plugin in plugins { result = await plugin.process(result, target: target) }
        return result
    }

    /// Runs the request closure and the plugins' `prepare`, turning their failures into CurlewError.
    nonisolated func prepareRequest(
        _ endpoint: Endpoint, target: Target
    ) async -> Result<TransportRequest, CurlewError> {
        do {
            var request = try await requestClosure(endpoint)
            for plugin in plugins { request = try await plugin.prepare(request, target: target) }
            if Task.isCancelled { return .failure(.transport(Self.cancelled(request))) }
            return .success(request)
        } catch let error as CurlewError {
            return .failure(error)
        } catch let error as TransportError {
            return .failure(.transport(error))
        } catch is CancellationError {
            return .failure(.transport(TransportError(.cancelled, message: "the task was cancelled", url: endpoint.url)))
        } catch {
            if Task.isCancelled {
                return .failure(.transport(TransportError(.cancelled, message: "the task was cancelled", url: endpoint.url)))
            }
            return .failure(.underlying(error, nil))
        }
    }

    /// Sends over the transport, sharing identical GET/HEAD transfers when tracking is on.
    private nonisolated func transfer(_ request: TransportRequest) async -> Result<ApiResponse, CurlewError> {
        let outcome: Result<TransportResponse, TransportError>
        if trackInflights, let key = InflightKey(request) {
            outcome = await sharedTransfer(request, key: key)
        } else {
            do {
                outcome = .success(try await session.execute(request))
            } catch {
                outcome = .failure(error)
            }
        }
        switch outcome {
        case .success(let response): return .success(ApiResponse(response, request: request))
        case .failure(let error):
            // A stream body's producer threw: its own error, as a failure from elsewhere.
            if error.code == .requestBodyFailed, let underlying = error.underlying { return .failure(.underlying(underlying, nil)) }
            return .failure(.transport(error))
        }
    }

    static func stubResponse(_ endpoint: Endpoint, request: TransportRequest) -> Result<ApiResponse, CurlewError> {
        switch endpoint.sampleResponseClosure() {
        case .networkResponse(let status, let data):
            return .success(ApiResponse(statusCode: status, data: data, request: request))
        case .response(let status, let headers, let data):
            var fields = HTTPFields()
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
                if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
            }
            return .success(ApiResponse(statusCode: status, data: data, request: request, headerFields: fields))
        case .networkError(let error):
            return .failure(.underlying(error, nil))
        }
    }

    /// Applies the target's validation: a status outside `codes` fails, keeping the response reachable.
    static func validate(_ result: Result<ApiResponse, CurlewError>, codes: [Int]) -> Result<ApiResponse, CurlewError> {
        guard case .success(let response) = result, !codes.isEmpty, !codes.contains(response.statusCode) else {
            return result
        }
        return .failure(.statusCode(response))
    }

    static func cancelled(_ request: TransportRequest) -> TransportError {
        TransportError(.cancelled, message: "the task was cancelled", url: request.url, method: request.method.rawValue)
    }
}
