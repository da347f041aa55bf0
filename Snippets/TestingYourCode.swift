// Testing your own code three ways: stubs from sample data, a mock transport, and a real local server.

// snippet.hide
import Curlew
import CurlewTesting
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
    var headers: [String: String]? { ["Accept": "application/json"] }
    var sampleData: Data { Data(#"{"city":"Oslo","celsius":4}"#.utf8) }
}

struct Forecast: Decodable, Sendable {
    let city: String
    let celsius: Int
}

// 1. Stubs: the target's sample data answers; the whole provider path (plugins, validation) runs.
let stubbed = Provider<Weather>(stubClosure: Provider.immediatelyStub)
print("stub:", try await stubbed.request(.today(city: "Oslo"), as: Forecast.self).value?.celsius ?? -1)

// 2. A mock transport: scripted replies, and every request recorded for your assertions.
let transport = MockTransport(replies: [
    .status(200, body: #"{"city":"Bergen","celsius":7}"#),
    .failure(TransportError(.timedOut, message: "the weather service is slow")),
])
let mocked = Provider<Weather>(session: transport)
print("mock:", try await mocked.request(.today(city: "Bergen"), as: Forecast.self).value?.celsius ?? -1)
do {
    _ = try await mocked.request(.today(city: "Bergen"))
} catch {
    print("mock failure:", error)
}
print("requests sent:", transport.requests.map(\.url))

// 3. A real HTTP server on 127.0.0.1, with the provider pointed at it in one line.
let server = try await LocalHTTPServer.start { request in
    .json(#"{"city":"\#(request.query["city"] ?? "")","celsius":-3}"#)
}
let local = Provider<Weather>(endpointClosure: server.endpointMapping())
print("server:", try await local.request(.today(city: "Tromsø"), as: Forecast.self).value?.city ?? "")
print("server saw:", server.requests.map(\.uri))
try await server.shutdown()
