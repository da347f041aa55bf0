// ApiResult: a success, an expected API error and an unexpected one, decoded by status code.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation

// A stand-in for the real API on loopback: /login checks the password, /broken fails with HTML.
let server = try await LocalHTTPServer.start { request in
    switch request.path {
    case "/login" where request.bodyText.contains(#""password":"hunter2""#): .json(#"{"token":"c7d83mdla"}"#)
    case "/login": .json(#"{"error_message":"Invalid username or password"}"#, status: 401)
    default: .html("<h1>Internal Server Error</h1>", status: 500)
    }
}
// snippet.show

enum Auth: TargetType {
    case login(user: String, password: String)
    case broken

    var baseURL: URL { URL(string: "https://auth.example.com")! }
    var path: String {
        switch self {
        case .login: "/login"
        case .broken: "/broken"
        }
    }
    var method: HTTPRequest.Method {
        switch self {
        case .login: .post
        case .broken: .get
        }
    }
    var task: RequestTask {
        switch self {
        case .login(let user, let password):
            .requestParameters(parameters: ["username": .string(user), "password": .string(password)], encoding: JSONEncoding.default)
        case .broken: .requestPlain
        }
    }
    var headers: [String: String]? { nil }
}

struct LoginResponse: Decodable, Sendable {
    let token: String
}

// snippet.hide
let provider = Provider<Auth>(endpointClosure: server.endpointMapping())
// snippet.show
for target in [Auth.login(user: "octocat", password: "hunter2"), .login(user: "octocat", password: "nope"), .broken] {
    switch try await provider.request(target, as: LoginResponse.self) {
    case .success(let login, _):
        print("logged in, token \(login.token)")
    case .failure(let message, let response):
        print("API error \(response.statusCode): \(message.errorMessage)")
    case .unexpected(let error, _):
        print("unexpected: \(error.message)")
    }
}
// snippet.hide
try await server.shutdown()
