// How an answer from the upstream becomes this service's answer.

import Curlew
import Hummingbird

extension ApiResult where Value: Encodable, ApiErrorMessage == UpstreamError {
    /// This service's answer to its client for the upstream's answer.
    ///
    /// - `success`: 200 with the value.
    /// - `failure`, the upstream's own error body: a status about the thing the client named passes
    ///   through (404 for an unknown user, 409, 410, 422); any other is this service's or the upstream's
    ///   problem, not the client's (401 means this service's credentials, 500 the upstream's failure):
    ///   502 Bad Gateway.
    /// - `unexpected`, an error body that is not the API's (a proxy's HTML page, an empty 503): 502.
    func gatewayResponse() throws -> Response {
        switch self {
        case .success(let value, _):
            return try .json(value)
        case .failure(let error, let response):
            let status = Self.passedThrough.first { $0.code == response.statusCode } ?? .badGateway
            return try .problem(status, detail: error.message, upstreamStatus: response.statusCode)
        case .unexpected(let error, let response):
            return try .problem(.badGateway, detail: error.message, upstreamStatus: response.statusCode)
        }
    }

    /// The upstream's error statuses that are about what the client asked for.
    private static var passedThrough: [HTTPResponse.Status] { [.notFound, .conflict, .gone, .unprocessableContent] }
}
