// How a failed upstream call becomes this service's answer.

import Curlew
import Hummingbird

extension CurlewError {
    /// The status this service answers with when its upstream call got no usable answer.
    ///
    /// The upstream too slow: 504. Unreachable, reset, closed early, TLS, a malformed or oversized
    /// answer, a 2xx body that is not the promised JSON: 502. The session stopping under the call: 503.
    /// The call cancelled (the client left, or the service stopped past its grace period): 499, which
    /// only the log sees, since nobody is left to read it. A request this service could not build: 500.
    var gatewayStatus: HTTPResponse.Status {
        switch self {
        case .transport(let error):
            switch error.code {
            case .timedOut: .gatewayTimeout
            case .cancelled: .clientClosedRequest
            case .sessionShutDown: .serviceUnavailable
            case .invalidURL, .invalidHeader, .invalidBody, .requestBodyFailed, .bodyLengthMismatch: .internalServerError
            default: .badGateway
            }
        case .objectMapping, .jsonMapping, .stringMapping, .statusCode, .eventStream: .badGateway
        case .encodableMapping, .requestMapping, .parameterEncoding, .multipartEncoding, .underlying:
            .internalServerError
        }
    }

    /// A problem-details answer with ``gatewayStatus``. The detail stays general: the error's own text
    /// names upstream URLs, which belong in this service's log, not in its answers.
    func gatewayResponse() throws -> Response {
        let status = gatewayStatus
        let detail =
            switch status {
            case .gatewayTimeout: "The upstream service did not answer in time."
            case .serviceUnavailable: "The service is shutting down."
            case .clientClosedRequest: "The client closed the connection before the answer."
            case .internalServerError: "The upstream request could not be made."
            default: "The upstream service could not be reached or gave an unusable answer."
            }
        return try .problem(status, detail: detail, upstreamStatus: response?.statusCode)
    }
}
