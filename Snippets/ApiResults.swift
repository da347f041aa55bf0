// ApiResult: a success, an expected API error and an unexpected one, decoded by status code.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation

enum Auth: TargetType {
    case login(user: String, password: String)
    case broken
    nonisolated(unsafe) static var base = ""
    var baseURL: URL { URL(string: Self.base)! }
    var path: String {
        switch self {
        case .login: "/login"
        case .broken: "/broken"
        }
    }
    var method: HTTPMethod {
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
let server = try await DemoAPI.start()
Auth.base = server.baseURL
// snippet.show

struct LoginResponse: Decodable, Sendable {
    let token: String
}

let provider = Provider<Auth>()
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
