// Customise endpoints: add a header to every request and see the three ways building a request fails.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation

let server = try await LocalHTTPServer.start { _ in .json(#"{"login":"octocat"}"#) }
// snippet.show

struct Profile: TargetType {
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "/users/octocat" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { ["Accept": "application/json"] }
}

// snippet.hide
let staging = URL(string: server.baseURL)!
// snippet.show
// An endpoint closure that sends the targets to another deployment and adds a header to every request.
// Names compare ignoring case: "accept" replaces the target's "Accept".
let provider = Provider<Profile>(endpointClosure: { target in
    Endpoint.default(for: target, baseURL: staging)
        .adding(newHTTPHeaderFields: ["X-App-Version": "1.4.2", "accept": "application/vnd.api+json"])
})
let response = try await provider.request(Profile())
print("status \(response.statusCode), sent headers: \(response.request?.headerFields.map(\.description) ?? [])")

// Building a request fails with requestMapping, parameterEncoding or encodableMapping, before anything is sent.
let broken = Endpoint(
    url: "not a url", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .get, task: .requestPlain,
    httpHeaderFields: nil)
do {
    _ = try broken.urlRequest()
} catch {
    print("refused: \(error)")
}
// snippet.hide
try await server.shutdown()

