// Stubbing: answer from sample data, immediately or after a delay, without touching the network.

// snippet.hide
import Curlew
import Foundation
// snippet.show

enum Weather: TargetType {
    case today(city: String)

    var baseURL: URL { URL(string: "https://weather.example")! }
    var path: String { "/today" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask {
        switch self {
        case .today(let city): .requestParameters(parameters: ["city": .string(city)], encoding: URLEncoding.queryString)
        }
    }
    var headers: [String: String]? { nil }
    var sampleData: Data { Data(#"{"city":"Oslo","celsius":4}"#.utf8) }
}

struct Forecast: Decodable, Sendable {
    let city: String
    let celsius: Int
}

let immediate = Provider<Weather>(stubClosure: Provider.immediatelyStub)
print(try await immediate.request(.today(city: "Oslo"), as: Forecast.self).value?.celsius ?? -1)

let delayed = Provider<Weather>(stubClosure: Provider.delayedStub(.milliseconds(100)))
let started = ContinuousClock.now
let response = try await delayed.request(.today(city: "Oslo"))
print("stubbed \(response.statusCode) after \(ContinuousClock.now - started), request \(response.request?.url ?? "")")

// A full sample response with headers, or a network error, per endpoint.
let unavailable = Provider<Weather>(
    endpointClosure: { target in
        Endpoint.default(for: target).replacing(sampleResponseClosure: {
            .response(status: 503, headers: ["Retry-After": "30"], data: Data())
        })
    },
    stubClosure: Provider.immediatelyStub)
let busy = try await unavailable.request(.today(city: "Oslo"))
print(busy.statusCode, busy.headerFields[.retryAfter] ?? "")
