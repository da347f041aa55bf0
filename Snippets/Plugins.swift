// Plugins: log requests as curl commands (secrets redacted) and attach an access token per target.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation
import Logging

struct Profile: TargetType, AccessTokenAuthorizable {
    let baseURL: URL
    var path: String { "/users/octocat" }
    var method: HTTPMethod { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { ["Accept": "application/json"] }
    var authorizationType: AuthorizationType? { .bearer }
}
let server = try await DemoAPI.start()
LoggingSystem.bootstrap { StreamLogHandler.standardOutput(label: $0) }
// snippet.show

let logger = NetworkLoggerPlugin(configuration: .init(logOptions: [.formatRequestAscURL, .successResponseBody]))
let token = AccessTokenPlugin { _, _ in "token-from-your-store" }
let activity = NetworkActivityPlugin { change, target in print("activity \(change): \(target.path)") }

let provider = Provider<Profile>(plugins: [token, logger, activity])
_ = try await provider.request(Profile(baseURL: URL(string: server.baseURL)!))
// snippet.hide
try await server.shutdown()
