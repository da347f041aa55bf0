// Curlew — the innermost member of a provider's chain: a stubbed target is answered with its endpoint's
// sample response instead of going to the transport.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes

/// Answers stubbed targets (a provider's `stubClosure`) with the endpoint's sample response, at once or
/// after the stub's delay; passes every other exchange to the transport. Innermost, so the middleware
/// around it (retries, authentication) sees stubbed responses exactly as it sees real ones.
struct StubResponder: Middleware {
    func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        guard context.stub != .never, let endpoint = context.endpoint else {
            return try await next(request, context, handler: handler)
        }
        if case .delayed(let delay) = context.stub {
            do {
                try await Task.sleep(for: delay)
            } catch {
                throw .transport(.cancelled(request))
            }
        }
        let (head, data) = try Self.sampleResponse(endpoint, request: request)
        let body = ResponseBody(data: data)
        defer { body.endScope() }
        return try await handler(head, body)
    }

    /// The endpoint's sample response as a head (HTTP version ``/CurlewEngine/HTTPVersion/none``: it did
    /// not come over the network) and body, or its sample error.
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
            switch error {
            case let error as CurlewError: throw error
            case let error as TransportError: throw .transport(error)
            default: throw .underlying(error, nil)
            }
        }
    }
}

extension TransportError {
    /// The error of a request whose calling task was cancelled.
    static func cancelled(_ request: TransportRequest) -> TransportError {
        TransportError(.cancelled, message: "the task was cancelled", url: request.url, method: request.method.rawValue)
    }
}
