// Moya's "Providers" page in Curlew: a provider and a call, cancelling it, the endpoint and stub
// closures, the session in place of Alamofire's manager (public-key pins for ServerTrustPolicy), and
// plugins.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation
import Synchronization

let server = try await LocalHTTPServer.start { request in
    switch request.path {
    case "/zen": .text("Speak like a human.")
    case "/slow": .hang
    default: .json(#"{"id":1,"name":"Ada"}"#)
    }
}
let staging = URL(string: server.baseURL)!
// snippet.show

// snippet.target
enum MyService: TargetType {
    case zen
    case showUser(id: Int)
    case slow

    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String {
        switch self {
        case .zen: "/zen"
        case .showUser(let id): "/users/\(id)"
        case .slow: "/slow"
        }
    }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
    var sampleData: Data {
        switch self {
        case .zen: Data("Half measures are as bad as nothing at all.".utf8)
        case .showUser(let id): Data(#"{"id":\#(id),"name":"Sample"}"#.utf8)
        case .slow: Data()
        }
    }
}
// snippet.end

// snippet.provider
// snippet.hide
do {
    // snippet.show
    let provider = Provider<MyService>()
    // snippet.hide
    precondition(provider.endpoint(.zen).url == "https://api.example.com/zen")
}
// The snippet's calls go to the loopback server.
let provider = Provider<MyService>(endpointClosure: { Endpoint.default(for: $0, baseURL: staging) })
// snippet.show
// snippet.end

// snippet.request
switch await provider.result(for: .zen) {
case .success(let response):
    print("success: \(response.statusCode)")
case .failure(let error):
    print("failure: \(error)")
}
// Or, without the Result: `let response = try await provider.request(.zen)`.
// snippet.end

// snippet.cancel
// Moya's Cancellable is the task: cancelling it aborts the transfer and frees its connection at once.
let call = Task { await provider.result(for: .slow) }
call.cancel()
switch await call.value {
case .success(let response):
    print("finished first: \(response.statusCode)")
case .failure(let error):
    precondition(error.isCancellation)  // CurlewError.transport with code .cancelled
}
// snippet.end

// snippet.mapped-provider
let endpointClosure = { @Sendable (target: MyService) -> Endpoint in
    let url = URL(target: target).absoluteString
    return Endpoint(
        url: url, sampleResponseClosure: { .networkResponse(200, target.sampleData) }, method: target.method,
        task: target.task, httpHeaderFields: target.headers)
}
let mappedProvider = Provider(endpointClosure: endpointClosure)  // Provider<MyService>, inferred
// The same endpoint as the default mapping's.
precondition(mappedProvider.endpoint(.zen) == Provider<MyService>.defaultEndpointMapping(for: .zen))
// snippet.end

// snippet.stub-closure
let mixedProvider = Provider<MyService>(
    // snippet.hide
    endpointClosure: { Endpoint.default(for: $0, baseURL: staging) },
    // snippet.show
    stubClosure: { target in
        switch target {
        case .zen: .immediate
        case .showUser: .delayed(.milliseconds(200))
        case .slow: .never
        }
    })
let stubbedZen = try await mixedProvider.request(.zen)
precondition(stubbedZen.data == MyService.zen.sampleData)
// snippet.end

// snippet.stub-helpers
let never: Provider<MyService>.StubClosure = Provider.neverStub
let immediately: Provider<MyService>.StubClosure = Provider.immediatelyStub
let delayed: Provider<MyService>.StubClosure = Provider.delayedStub(.milliseconds(200))
precondition([never(.zen), immediately(.zen), delayed(.zen)] == [.never, .immediate, .delayed(.milliseconds(200))])
// snippet.end

// snippet.immediate
let immediateProvider = Provider<MyService>(stubClosure: { _ in .immediate })
let sameProvider = Provider<MyService>(stubClosure: Provider.immediatelyStub)
let first = try await immediateProvider.request(.showUser(id: 7))
let second = try await sameProvider.request(.showUser(id: 7))
precondition(first == second && first.data == MyService.showUser(id: 7).sampleData)
// snippet.end

// snippet.session
// The defaults: 10 s to connect, 60 s in all, User-Agent "Curlew/0.1", gzip, deflate (and br or zstd
// when libcurl has them) offered in Accept-Encoding. Nothing is sent before a call is awaited, and a
// stubbed call never reaches the session.
var configuration = SessionConfiguration()
configuration.userAgent = "MyService/1.0"
configuration.connectTimeout = .seconds(5)
let session = try CurlSession(configuration: configuration)
let configuredProvider = Provider<MyService>(
    // snippet.hide
    endpointClosure: { Endpoint.default(for: $0, baseURL: staging) },
    // snippet.show
    session: session)
let sent = try await configuredProvider.request(.zen)
precondition(server.requests.last?.header("User-Agent") == "MyService/1.0" && sent.statusCode == 200)
// snippet.end

// snippet.pinning
// Alamofire's ServerTrustPolicy.pinPublicKeys: the chain and the host name are verified by default, and a
// pinned host's certificate key must match one of its pins (list two while you rotate keys). Make a pin
// with openssl (see the TLS article).
var pinned = SessionConfiguration()
pinned.tls.pinnedPublicKeys = ["example.com": ["sha256//YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="]]
let pinnedSession = try CurlSession(configuration: pinned)
let pinnedProvider = Provider<MyService>(
    // snippet.hide
    endpointClosure: { Endpoint.default(for: $0, baseURL: staging) },
    // snippet.show
    session: pinnedSession)
// snippet.end
_ = try await pinnedProvider.request(.zen)

// snippet.activity-plugin
// A plugin like Moya's NetworkActivityPlugin, written against Curlew's PluginType.
struct ActivityPlugin: PluginType {
    typealias ActivityClosure = @Sendable (_ change: NetworkActivityChangeType, _ target: any TargetType) -> Void
    let activityClosure: ActivityClosure

    init(activityClosure: @escaping ActivityClosure) {
        self.activityClosure = activityClosure
    }

    /// Called just before the request is sent (or a stub answers).
    func willSend(_ request: TransportRequest, target: any TargetType) async {
        activityClosure(.began, target)
    }

    /// Called with every result, failures and cancellation included.
    func didReceive(_ result: Result<ApiResponse, CurlewError>, target: any TargetType) async {
        activityClosure(.ended, target)
    }
}
// snippet.end

// snippet.plugins
let changes = Mutex<[NetworkActivityChangeType]>([])
let pluginProvider = Provider<MyService>(
    // snippet.hide
    endpointClosure: { Endpoint.default(for: $0, baseURL: staging) },
    // snippet.show
    plugins: [
        ActivityPlugin { change, _ in changes.withLock { $0.append(change) } },
        NetworkActivityPlugin { change, target in print("\(change): \(target.path)") },  // the shipped one
        NetworkLoggerPlugin(configuration: .init(output: { _, entries, _ in print(entries.joined(separator: "\n")) })),
        CredentialsPlugin { _ in Credentials(user: "ada", password: "s3cret") },  // HTTP Basic
    ])
_ = try await pluginProvider.request(.showUser(id: 1))
precondition(changes.withLock { $0 } == [.began, .ended])
precondition(server.requests.last?.header("Authorization") == "Basic YWRhOnMzY3JldA==")
// snippet.end
// snippet.hide
await session.shutdown()
await pinnedSession.shutdown()
try await server.shutdown()
