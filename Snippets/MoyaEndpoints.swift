// Moya's "Endpoints" page in Curlew: the default endpoint closure, adding header fields for every or
// some targets, sample responses, the request closure, cookies per request, and the three errors of
// building a request.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation
import Synchronization

let server = try await LocalHTTPServer.start { request in
    switch request.path {
    case "/authenticate": .json(#"{"token":"t-42"}"#, headers: [("Set-Cookie", "session=abc123; Path=/")])
    default: .json(#"{"name":"Ada"}"#)
    }
}
let staging = URL(string: server.baseURL)!
// snippet.show

// snippet.target
enum MyTarget: TargetType {
    case authenticate(user: String)
    case profile
    case settings

    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String {
        switch self {
        case .authenticate: "/authenticate"
        case .profile: "/me"
        case .settings: "/me/settings"
        }
    }
    var method: HTTPRequest.Method {
        switch self {
        case .authenticate: .post
        case .profile, .settings: .get
        }
    }
    var task: RequestTask {
        switch self {
        case .authenticate(let user): .requestParameters(parameters: ["user": .string(user)], encoding: JSONEncoding.default)
        case .profile, .settings: .requestPlain
        }
    }
    var headers: [String: String]? { ["Accept": "application/json"] }
    var sampleData: Data { Data(#"{"name":"Sample"}"#.utf8) }
}
// snippet.end

// snippet.default-mapping
let endpointClosure = { @Sendable (target: MyTarget) -> Endpoint in
    let url = URL(target: target).absoluteString
    return Endpoint(
        url: url, sampleResponseClosure: { .networkResponse(200, target.sampleData) }, method: target.method,
        task: target.task, httpHeaderFields: target.headers)
}
precondition(endpointClosure(.profile) == Endpoint.default(for: MyTarget.profile))
// snippet.end

// snippet.app-name
let appNameProvider = Provider<MyTarget>(endpointClosure: { target in
    let defaultEndpoint = Provider<MyTarget>.defaultEndpointMapping(for: target)
    // snippet.hide
        .replacingBaseURL(staging, for: target)
    // snippet.show
    return defaultEndpoint.adding(newHTTPHeaderFields: ["APP_NAME": "MY_AWESOME_APP"])
})
_ = try await appNameProvider.request(.profile)
precondition(server.requests.last?.header("APP_NAME") == "MY_AWESOME_APP")
// snippet.end

// snippet.auth-token
enum GlobalAppStorage {
    static let authToken = Mutex("token-from-your-login")
}

let signingProvider = Provider<MyTarget>(endpointClosure: { target in
    let defaultEndpoint = Provider<MyTarget>.defaultEndpointMapping(for: target)
    // snippet.hide
        .replacingBaseURL(staging, for: target)
    // snippet.show
    // Sign all non-authenticating requests.
    switch target {
    case .authenticate:
        return defaultEndpoint
    default:
        return defaultEndpoint.adding(newHTTPHeaderFields: [
            "AUTHENTICATION_TOKEN": GlobalAppStorage.authToken.withLock { $0 }
        ])
    }
})
_ = try await signingProvider.request(.authenticate(user: "ada"))
precondition(server.requests.last?.header("AUTHENTICATION_TOKEN") == nil)
_ = try await signingProvider.request(.profile)
precondition(server.requests.last?.header("AUTHENTICATION_TOKEN") == "token-from-your-login")
// snippet.end

// snippet.sample-responses
let stubbed = Provider<MyTarget>(
    endpointClosure: { target in
        let sample: EndpointSampleResponse =
            switch target {
            case .authenticate: .networkResponse(401, Data(#"{"error_message":"expired"}"#.utf8))
            case .profile: .response(status: 200, headers: ["ETag": "\"v1\""], data: Data(#"{"name":"Ada"}"#.utf8))
            case .settings: .networkError(TransportError(.timedOut, message: "stubbed timeout"))
            }
        return Endpoint(
            url: Endpoint.defaultURL(for: target), sampleResponseClosure: { sample }, method: target.method,
            task: target.task, httpHeaderFields: target.headers)
    },
    stubClosure: Provider.immediatelyStub)

let refused = try await stubbed.request(.authenticate(user: "ada"))  // a status code and data
let profile = try await stubbed.request(.profile)  // a full response: status, header fields, data
precondition(refused.statusCode == 401 && profile.headerFields[.eTag] == "\"v1\"")
do {
    _ = try await stubbed.request(.settings)  // the request failed to get a response
} catch .transport(let error) {
    precondition(error.code == .timedOut)
} catch {
    preconditionFailure("\(error)")
}
// snippet.end

// snippet.request-closure
struct NotSigned: Error {}

let requestClosure: Provider<MyTarget>.RequestClosure = { endpoint in
    var request = try endpoint.urlRequest()
    // Modify the request however you like; the closure is async, so it can await a signing service.
    try request.setValue("signature-of-\(request.url.utf8.count)", forHTTPHeaderField: "X-Signature")
    guard request.url.hasPrefix("http") else { throw NotSigned() }  // refuse it: nothing is sent
    print("sending \(request.method) \(request.url)")  // or just log it
    return request
}
let signedProvider = Provider<MyTarget>(
    // snippet.hide
    endpointClosure: { Endpoint.default(for: $0, baseURL: staging) },
    // snippet.show
    requestClosure: requestClosure)
_ = try await signedProvider.request(.profile)
precondition(server.requests.last?.header("X-Signature") != nil)
// snippet.end

// snippet.refused
// A CurlewError thrown by the closure arrives as it is; any other error as .underlying.
let refusing = Provider<MyTarget>(requestClosure: { _ in throw NotSigned() })
do {
    _ = try await refusing.request(.profile)
} catch .underlying(let error, _) {
    precondition(error is NotSigned)
} catch {
    preconditionFailure("\(error)")
}
// snippet.end

// snippet.cookies
var configuration = SessionConfiguration()
configuration.cookies = .inMemory  // off by default: a server-side client acts for many users
let session = try CurlSession(configuration: configuration)

let cookielessProvider = Provider<MyTarget>(
    // snippet.hide
    endpointClosure: { Endpoint.default(for: $0, baseURL: staging) },
    // snippet.show
    requestClosure: { endpoint in
        var request = try endpoint.urlRequest()
        request.options.handlesCookies = false  // URLRequest's httpShouldHandleCookies = false
        return request
    },
    session: session)
// The same session (and jar), cookies handled.
let cookieProvider = Provider<MyTarget>(
    // snippet.hide
    endpointClosure: { Endpoint.default(for: $0, baseURL: staging) },
    // snippet.show
    session: session)
_ = try await cookieProvider.request(.authenticate(user: "ada"))  // the jar keeps session=abc123
_ = try await cookieProvider.request(.profile)
precondition(server.requests.last?.header("Cookie") == "session=abc123")
_ = try await cookielessProvider.request(.profile)
precondition(server.requests.last?.header("Cookie") == nil)
// snippet.end

// snippet.errors
struct Reading: Encodable, Sendable {
    let celsius: Double
}

let endpoints = [
    Endpoint(url: "not a url", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .get, task: .requestPlain, httpHeaderFields: nil),
    Endpoint.default(for: MyTarget.profile).replacing(
        task: .requestCompositeParameters(bodyParameters: ["a": 1], bodyEncoding: URLEncoding.queryString, urlParameters: [:])),
    Endpoint.default(for: MyTarget.profile).replacing(task: .requestJSONEncodable(Reading(celsius: .nan))),
]
for endpoint in endpoints {
    do {
        _ = try endpoint.urlRequest()
    } catch .requestMapping(let url) {
        print("no request can be made for \(url)")
    } catch .parameterEncoding(let error) {
        print("the parameters could not be encoded: \(error)")
    } catch .encodableMapping(let error) {
        print("the Encodable could not be encoded: \(error)")
    } catch {
        print("unexpected: \(error)")
    }
}
// snippet.end
// snippet.hide
await session.shutdown()
try await server.shutdown()

extension Endpoint {
    /// This endpoint with the target's URL rebuilt on another base URL (the loopback server).
    func replacingBaseURL(_ baseURL: URL, for target: some TargetType) -> Endpoint {
        let moved = Endpoint.default(for: target, baseURL: baseURL)
        precondition(url == Endpoint.defaultURL(for: target))
        return Endpoint(
            url: moved.url, sampleResponseClosure: sampleResponseClosure, method: method, task: task,
            httpHeaderFields: httpHeaderFields, transferOptions: transferOptions, redirectPolicy: redirectPolicy)
    }
}
