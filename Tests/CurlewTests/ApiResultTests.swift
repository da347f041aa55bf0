// Curlew — ApiResult decodes by status code and keeps the three outcomes apart.

import Curlew
import Foundation
import Testing

@Suite struct ApiResultTests {
    struct LoginResponse: Decodable, Equatable, Sendable {
        let user_id: String
        let token: String
    }

    func response(_ status: Int, _ body: String, contentType: String? = nil) -> ApiResponse {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        return ApiResponse(statusCode: status, data: Data(body.utf8), headerFields: fields)
    }

    @Test func successDecodesTheValue() throws {
        let result = try ApiResult<LoginResponse, ApiErrorMessage>.decode(
            from: response(200, #"{"user_id":"123","token":"c7d83mdla_3ms"}"#))
        #expect(result.value == LoginResponse(user_id: "123", token: "c7d83mdla_3ms"))
        #expect(result.isSuccess)
        #expect(result.statusCode == 200)
        #expect(try result.get() == LoginResponse(user_id: "123", token: "c7d83mdla_3ms"))
    }

    @Test func expectedApiErrorDecodesTheMessage() throws {
        let result = try ApiResult<LoginResponse, ApiErrorMessage>.decode(from: response(401, #"{"error_message":"User doesn't exist."}"#))
        #expect(result.errorMessage == ApiErrorMessage(errorMessage: "User doesn't exist."))
        #expect(result.value == nil)
        #expect(result.unexpectedError == nil)
        #expect(result.statusCode == 401)
        #expect(throws: ApiResultError<ApiErrorMessage>.self) { try result.get() }
    }

    @Test func htmlServerErrorIsUnexpectedWithStatusAndRawBody() throws {
        let html = "<html><body><h1>500 Internal Server Error</h1></body></html>"
        let result = try ApiResult<LoginResponse, ApiErrorMessage>.decode(from: response(500, html, contentType: "text/html"))
        let unexpected = try #require(result.unexpectedError)
        #expect(unexpected.statusCode == 500)
        #expect(unexpected.body == Data(html.utf8))
        #expect(unexpected.message == "Unexpected response from the server (HTTP 500, text/html, \(html.utf8.count) bytes)")
        #expect(result.errorMessage == nil)
    }

    @Test func emptyBadGatewayIsUnexpected() throws {
        let result = try ApiResult<LoginResponse, ApiErrorMessage>.decode(from: response(502, ""))
        let unexpected = try #require(result.unexpectedError)
        #expect(unexpected.statusCode == 502)
        #expect(unexpected.body.isEmpty)
        #expect(unexpected.message == "Unexpected response from the server (HTTP 502, empty body)")
    }

    @Test func undecodableSuccessIsThrownNotAResult() {
        #expect {
            _ = try ApiResult<LoginResponse, ApiErrorMessage>.decode(from: response(200, #"{"unexpected":true}"#))
        } throws: { error in
            guard case .objectMapping(_, let kept) = error as? CurlewError else { return false }
            return kept.statusCode == 200
        }
    }

    @Test func anyDecodableErrorMessageType() throws {
        struct Problem: Decodable, Equatable, Sendable { let title: String; let status: Int }
        let result = try ApiResult<LoginResponse, Problem>.decode(from: response(422, #"{"title":"Invalid","status":422}"#))
        #expect(result.errorMessage == Problem(title: "Invalid", status: 422))
    }

    @Test func customDecoder() throws {
        struct Session: Decodable, Equatable, Sendable { let userId: String; let expiresAt: Date }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .secondsSince1970
        let result = try ApiResult<Session, ApiErrorMessage>.decode(
            from: response(201, #"{"user_id":"9","expires_at":1700000000}"#), using: decoder)
        #expect(result.value == Session(userId: "9", expiresAt: Date(timeIntervalSince1970: 1_700_000_000)))
    }

    @Test func emptyBodyForNoContent() throws {
        let result = try ApiResult<EmptyBody, ApiErrorMessage>.decode(from: response(204, ""))
        #expect(result.value == EmptyBody())
    }

    @Test func outcomesAreDistinguishableAndEquatable() throws {
        let success = try ApiResult<LoginResponse, ApiErrorMessage>.decode(from: response(200, #"{"user_id":"1","token":"t"}"#))
        let failure = try ApiResult<LoginResponse, ApiErrorMessage>.decode(from: response(401, #"{"error_message":"no"}"#))
        let unexpected = try ApiResult<LoginResponse, ApiErrorMessage>.decode(from: response(500, "oops"))
        #expect(success != failure)
        #expect(failure != unexpected)
        #expect(success == (try ApiResult<LoginResponse, ApiErrorMessage>.decode(from: response(200, #"{"user_id":"1","token":"t"}"#))))
    }
}
