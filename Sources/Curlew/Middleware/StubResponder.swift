// Curlew — the end of a provider's chain for a stubbed target: its endpoint's sample response instead of
// the transport.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes

/// Answers stubbed targets (a provider's `stubClosure`) with the endpoint's sample response, at once or
/// after the stub's delay, in place of the transport at the end of the chain: the middleware (retries,
/// authentication, in-flight sharing) sees stubbed responses exactly as it sees real ones.
enum StubResponder {
    /// The sample response of `endpoint` handed to `handler`, after the stub's delay.
    nonisolated(nonsending) static func answer<Return>(
        _ request: TransportRequest, endpoint: Endpoint, stub: StubBehavior, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        if case .delayed(let delay) = stub {
            do {
                try await Task.sleep(for: delay)
            } catch {
                throw .transport(.cancelled(request))
            }
        }
        let (head, data) = try sampleResponse(endpoint, request: request)
        let body = ResponseBodyStream(data: data)
        defer { body.endScope() }
        return try await handler(head, body)
    }

    /// The endpoint's sample response as a head and body, or its sample error.
    static func sampleResponse(_ endpoint: Endpoint, request: TransportRequest) throws(CurlewError) -> (ResponseHead, Data) {
        switch endpoint.sampleResponseClosure() {
        case .networkResponse(let status, let data):
            return (ResponseHead(status: HTTPResponse.Status(code: status), effectiveURL: request.url), data)
        case .response(let status, let headers, let data):
            var fields = HTTPFields()
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
                if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
            }
            return (ResponseHead(status: HTTPResponse.Status(code: status), headerFields: fields, effectiveURL: request.url), data)
        case .networkError(let error):
            // A stubbed transport failure arrives as a real one would, so code that handles timeouts
            // or cancellation (and the retry middleware) can be tested with stubs.
            throw CurlewError(mapping: error, url: request.url)
        }
    }
}

extension TransportError {
    /// The error of a request whose calling task was cancelled.
    static func cancelled(_ request: TransportRequest) -> TransportError {
        TransportError(.cancelled, message: "the task was cancelled", url: request.url, method: request.method.rawValue)
    }
}
