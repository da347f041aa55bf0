// A provider with a request closure that signs requests, and a typed call.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation

let server = try await LocalHTTPServer.start { request in
    request.header("X-Signature") == nil
        ? .json(#"{"error_message":"unsigned"}"#, status: 401)
        : .json(#"{"login":"octocat","public_repos":8}"#)
}
// snippet.show

enum GitHub: TargetType {
    case user(String)

    var baseURL: URL { URL(string: "https://api.github.com")! }
    var path: String {
        switch self {
        case .user(let name): "/users/\(name)"
        }
    }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}

struct User: Decodable, Sendable {
    let login: String
    let publicRepos: Int
}

let decoder = JSONDecoder()
decoder.keyDecodingStrategy = .convertFromSnakeCase
let provider = Provider<GitHub>(
    // snippet.hide
    endpointClosure: server.endpointMapping(),
    // snippet.show
    requestClosure: { endpoint in
        var request = try endpoint.urlRequest()
        try request.setValue("hmac-of-\(request.url.count)", forHTTPHeaderField: "X-Signature")
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
