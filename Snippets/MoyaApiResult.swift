// The typed-results blog post in Curlew: a plain request, ApiResult, the login models, decoding by
// status code, and the three categories of errors.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation
// snippet.show

// snippet.success-json
// POST /login with the right password answers 200:
let loginSucceededJSON = #"{"user_id": "123", "token": "c7d83mdla_3ms"}"#
// snippet.end

// snippet.failure-json
// ...and with an unknown email, 404:
let loginFailedJSON = #"{"error_message": "User doesn't exist."}"#
// snippet.end

// snippet.hide
let server = try await LocalHTTPServer.start { request in
    switch request.path {
    case "/login" where !request.bodyText.contains("email=john%40doe.com"): .json(loginFailedJSON, status: 404)
    case "/login" where request.bodyText.contains("password=onlyjohnknowsme"): .json(loginSucceededJSON)
    case "/login": .json(#"{"user_id": 123}"#)  // a 2xx the client cannot decode
    case "/slow": .hang
    default: .html("<h1>Internal Server Error</h1>", status: 500)
    }
}
let url = server.url("/status")
var savedUserID: String?
var savedToken: String?
// snippet.show

// snippet.plain-request
let session = try CurlSession()
do {
    let response = try await session.execute(TransportRequest(url: url))
    print("handle response: \(response.status.code), \(response.body.count) bytes")
} catch {
    print("handle error: \(error.code)")  // a TransportError: no response arrived
}
// snippet.end

// snippet.login-response
struct LoginResponse: Decodable, Sendable {
    let userID: String
    let token: String

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case token
    }
}
// snippet.end

// snippet.error-message
// The error body, {"error_message": "..."}, is Curlew's `ApiErrorMessage` (its `errorMessage` property).
// Declare an API's error type once for its targets; any Decodable & Sendable type can take its place.
extension Auth: ApiErrorMessageTarget {
    typealias ErrorMessage = ApiErrorMessage
}
let message = try ApiResponse(statusCode: 404, data: Data(loginFailedJSON.utf8)).map(ApiErrorMessage.self)
precondition(message.errorMessage == "User doesn't exist.")
// snippet.end

// snippet.target
// The login call as a target: Alamofire's default encoding for a POST puts the parameters in a form body.
enum Auth: TargetType {
    case login(email: String, password: String)
    case crash
    case slow

    var baseURL: URL { URL(string: "https://my-api.com")! }
    var path: String {
        switch self {
        case .login: "/login"
        case .crash: "/crash"
        case .slow: "/slow"
        }
    }
    var method: HTTPRequest.Method {
        switch self {
        case .login: .post
        case .crash, .slow: .get
        }
    }
    var task: RequestTask {
        switch self {
        case .login(let email, let password):
            .requestParameters(parameters: ["email": .string(email), "password": .string(password)], encoding: URLEncoding.default)
        case .crash, .slow: .requestPlain
        }
    }
    var headers: [String: String]? { nil }
    // A short idle timeout, so that `.slow` fails quickly on the client side.
    var transferOptions: TransferOptions { TransferOptions(idleTimeout: .milliseconds(200)) }
}
// snippet.end

// snippet.hide
let provider = Provider<Auth>(endpointClosure: server.endpointMapping())
// snippet.show

// snippet.api-result
// ApiResult<Value, ApiErrorMessage> has three cases, each with the response:
// .success(Value, ApiResponse), .failure(ApiErrorMessage, ApiResponse), .unexpected(UnexpectedApiError, ApiResponse).
let response = ApiResponse(statusCode: 404, data: Data(loginFailedJSON.utf8))
let expected: ApiResult<LoginResponse, ApiErrorMessage> = .failure(ApiErrorMessage(errorMessage: "User doesn't exist."), response)
print(expected.value == nil, expected.errorMessage?.errorMessage ?? "", expected.statusCode)
// snippet.end

// snippet.decode-by-status
// 2xx decodes as the value, anything else as the error message, and an error body that does not decode
// is .unexpected with its status and raw body (the post's "Server Error." fallback).
let decoded = try ApiResult<LoginResponse, ApiErrorMessage>.decode(from: response)
precondition(decoded.errorMessage == expected.errorMessage)
let page = ApiResponse(statusCode: 500, data: Data("<h1>Internal Server Error</h1>".utf8))
let crashed = try ApiResult<LoginResponse, ApiErrorMessage>.decode(from: page)
print(crashed.unexpectedError?.message ?? "")  // Unexpected response from the server (HTTP 500, 30 bytes)
// snippet.end

// snippet.login
// The three categories of errors: client-side (thrown), expected API errors (.failure), unexpected
// API errors (.unexpected).
for (email, password) in [("john@doe.com", "onlyjohnknowsme"), ("jane@doe.com", "anything")] {
    do {
        switch try await provider.request(.login(email: email, password: password), as: LoginResponse.self) {
        case .success(let login, _):
            savedUserID = login.userID
            savedToken = login.token
        case .failure(let message, let response):
            print("show error \(response.statusCode): \(message.errorMessage)")
        case .unexpected(let error, _):
            print("show error \(error.statusCode): \(error.message)")
        }
    } catch {
        // Client-side: no connectivity, a timeout, cancellation, a 2xx body that does not decode.
        print("client error: \(error)")
    }
}
// snippet.end
precondition(savedUserID == "123" && savedToken == "c7d83mdla_3ms")

// snippet.categories
let crash = try await provider.request(.crash, as: LoginResponse.self)
precondition(crash.unexpectedError?.statusCode == 500)
do {
    _ = try await provider.request(.slow, as: LoginResponse.self)
} catch .transport(let error) {
    print("client side: \(error.code)")  // timedOut: the server never answered
} catch {
    print("client side: \(error)")
}
do {
    _ = try await provider.request(.login(email: "john@doe.com", password: "typo"), as: LoginResponse.self)
} catch .objectMapping(let error, let response) {
    print("client side: a \(response.statusCode) the app cannot read: \(error)")
} catch {
    print("client side: \(error)")
}
// snippet.end
// snippet.hide
await session.shutdown()
try await server.shutdown()
