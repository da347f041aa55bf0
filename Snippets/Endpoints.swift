// Customise endpoints: add a header to every request and see the three ways building a request fails.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation

struct Items: TargetType {
    var baseURL: URL
    var path: String { "/users/octocat" }
    var method: HTTPMethod { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}
let server = try await DemoAPI.start()
let target = Items(baseURL: URL(string: server.baseURL)!)
// snippet.show

// An endpoint closure that adds a header to every endpoint of the provider.
let provider = Provider<Items>(endpointClosure: { target in
    Endpoint.default(for: target).adding(newHTTPHeaderFields: ["X-App-Version": "1.4.2"])
})
let response = try await provider.request(target)
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
