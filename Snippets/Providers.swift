// A provider with a request closure that signs requests, and a typed call.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation

enum Demo: TargetType {
    case user(String)
    nonisolated(unsafe) static var base = ""
    var baseURL: URL { URL(string: Self.base)! }
    var path: String {
        switch self {
        case .user(let name): "/users/\(name)"
        }
    }
    var method: HTTPMethod { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}
let server = try await DemoAPI.start()
Demo.base = server.baseURL
struct User: Decodable, Sendable {
    let login: String
    let publicRepos: Int
}
// snippet.show

let decoder = JSONDecoder()
decoder.keyDecodingStrategy = .convertFromSnakeCase
let provider = Provider<Demo>(
    requestClosure: { endpoint in
        var request = try endpoint.urlRequest()
        request.headerFields[HTTPField.Name("X-Signature")!] = "hmac-of-\(request.url.count)"
        return request
    },
    session: try CurlSession(),
    decoder: decoder
)

let result = try await provider.request(.user("octocat"), as: User.self)
if let user = result.value {
    print("\(user.login) has \(user.publicRepos) public repositories")
}
// snippet.hide
try await server.shutdown()
