// Plugins: log requests as curl commands (secrets redacted) and attach an access token per target.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation
import Logging

let server = try await LocalHTTPServer.start { _ in .json(#"{"login":"octocat"}"#) }
LoggingSystem.bootstrap { StreamLogHandler.standardOutput(label: $0) }
// snippet.show

struct Profile: TargetType, AccessTokenAuthorizable {
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "/users/octocat" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { ["Accept": "application/json"] }
    var authorizationType: AuthorizationType? { .bearer }
}

// The logged curl line is what goes on the wire: the session's User-Agent and Accept-Encoding included,
// the token redacted.
let logger = NetworkLoggerPlugin(configuration: .init(logOptions: [.formatRequestAscURL, .successResponseBody]))
let token = AccessTokenPlugin { _, _ in "token-from-your-store" }
let activity = NetworkActivityPlugin { change, target in print("activity \(change): \(target.path)") }

// Or format each entry and choose where it goes.
let custom = NetworkLoggerPlugin(
    configuration: .init(
        logOptions: [.requestMethod],
        formatter: .init(entry: { identifier, message, target in "\(target.path) \(identifier): \(message)" }),
        output: { _, entries, level in print("[\(level)]", entries.joined(separator: "; ")) }))

let provider = Provider<Profile>(
    // snippet.hide
    endpointClosure: server.endpointMapping(),
    // snippet.show
    plugins: [token, logger, activity, custom])
_ = try await provider.request(Profile())
// snippet.hide
try await server.shutdown()
