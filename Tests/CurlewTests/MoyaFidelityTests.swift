// Curlew — behaviours a Moya user porting their code relies on, each checked against a real server.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Logging
import Testing

@Suite struct MoyaFidelityTests {
    /// Answers with every header line the server received, as `name: value` lines in order.
    static let headerEcho: LocalHTTPServer.Handler = { request in
        .text(request.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n"))
    }

    // MARK: Header names are case-insensitive

    @Test func addingReplacesAFieldWhateverTheCaseOfItsName() async throws {
        try await withServer(Self.headerEcho) { server, session in
            var target = Local(server, "/")
            target.headers = ["Content-Type": "application/json", "Accept": "text/plain"]
            let provider = Provider<Local>(
                endpointClosure: { target in
                    Endpoint.default(for: target).adding(newHTTPHeaderFields: ["content-type": "application/vnd.api+json"])
                }, session: session)
            let lines = try await provider.request(target).data.text.split(separator: "\n")
            #expect(lines.filter { $0.lowercased().hasPrefix("content-type:") } == ["content-type: application/vnd.api+json"])
            #expect(lines.filter { $0.hasPrefix("Accept:") } == ["Accept: text/plain"])
        }
        let merged = Endpoint(
            url: "https://example.com", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .get,
            task: .requestPlain, httpHeaderFields: ["X-Api-Key": "old", "Accept": "a"]
        ).adding(newHTTPHeaderFields: ["x-api-key": "new"])
        #expect(merged.httpHeaderFields == ["x-api-key": "new", "Accept": "a"])
    }

    @Test func addingNoFieldsToAnEndpointWithoutFieldsKeepsThemNil() {
        let endpoint = Endpoint(
            url: "https://example.com", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .get,
            task: .requestPlain, httpHeaderFields: nil)
        #expect(endpoint.adding(newHTTPHeaderFields: [:]).httpHeaderFields == nil)
        #expect(endpoint.adding(newHTTPHeaderFields: ["A": "1"]).httpHeaderFields == ["A": "1"])
    }

    // MARK: Endpoint equality does not depend on JSON key order

    struct Profile: Encodable, Sendable {
        let name = "Ada"
        let email = "ada@example.com"
        let city = "London"
        let country = "UK"
        let language = "en"
        let timezone = "Europe/London"
        let plan = "pro"
        let seats = 3
        let tags = ["x": 1, "y": 2, "z": 3, "w": 4, "v": 5]
    }

    @Test func endpointsWithACustomEncoderCompareEqualWhateverTheKeyOrder() throws {
        func endpoint() -> Endpoint {
            Endpoint(
                url: "https://example.com/profile", sampleResponseClosure: { .networkResponse(200, Data()) },
                method: .put, task: .requestCustomJSONEncodable(Profile(), encoder: JSONEncoder()),
                httpHeaderFields: ["Accept": "application/json"])
        }
        let endpoints = (0..<20).map { _ in endpoint() }
        for other in endpoints.dropFirst() {
            #expect(endpoints[0] == other)
            #expect(endpoints[0].hashValue == other.hashValue)
        }
        #expect(Set(endpoints).count == 1)
        let different = Endpoint(
            url: "https://example.com/profile", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .put,
            task: .requestCustomJSONEncodable(["name": "Grace"], encoder: JSONEncoder()),
            httpHeaderFields: ["Accept": "application/json"])
        #expect(endpoints[0] != different)
    }

    @Test func inflightKeysDoNotDependOnKeyOrderAndBytesSentAreTheEncoders() async throws {
        let slow: LocalHTTPServer.Handler = { request in .delayed(.milliseconds(300), .text(request.bodyText)) }
        try await withServer(slow) { server, session in
            let provider = Provider<Local>(session: session, trackInflights: true)
            let target = Local(server, "/search", task: .requestCustomJSONEncodable(Profile(), encoder: JSONEncoder()))
            let bodies = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 { group.addTask { try await provider.request(target).data.text } }
                var all: [String] = []
                for try await body in group { all.append(body) }
                return all
            }
            #expect(server.statistics.requestsReceived == 1)
            #expect(Set(bodies).count == 1)
            // What was sent is what the user's encoder wrote (here, in whatever key order it chose).
            let sent = try #require(server.requests.first?.body)
            let decoded = try JSONSerialization.jsonObject(with: Data(sent)) as? [String: Any]
            #expect(decoded?["name"] as? String == "Ada")
            #expect(decoded?.count == 9)
        }
    }

    // MARK: An underlying error describes itself as its own message

    @Test func underlyingErrorDescriptionIsTheWrappedErrorsMessage() {
        let nsError = NSError(domain: "Auth", code: 7, userInfo: [NSLocalizedDescriptionKey: "The token expired"])
        let error = CurlewError.underlying(nsError, nil)
        #expect(error.description == "The token expired")
        #expect(error.errorDescription == "The token expired")
        #expect(error.localizedDescription == "The token expired")

        struct Localized: LocalizedError {
            var errorDescription: String? { "Signing key missing" }
        }
        #expect(CurlewError.underlying(Localized(), nil).description == "Signing key missing")
    }

    // MARK: MultiTarget forwards what the wrapped target declares

    enum Account: TargetType, AccessTokenAuthorizable {
        case me(base: String)
        case publicInfo(base: String)
        var baseURL: URL {
            switch self {
            case .me(let base), .publicInfo(let base): URL(string: base)!
            }
        }
        var path: String { "/account" }
        var method: HTTPRequest.Method { .get }
        var task: RequestTask { .requestPlain }
        var headers: [String: String]? { nil }
        var authorizationType: AuthorizationType? {
            switch self {
            case .me: .bearer
            case .publicInfo: nil
            }
        }
    }

    @Test func multiTargetForwardsAuthorizationAndThePluginSeesTheInnerTarget() async throws {
        let authorizable = MultiTarget(Account.me(base: "http://127.0.0.1")) as (any TargetType) as? any AccessTokenAuthorizable
        #expect(authorizable?.authorizationType == .bearer)
        #expect((MultiTarget(Account.publicInfo(base: "http://127.0.0.1")) as any TargetType as? any AccessTokenAuthorizable)?
            .authorizationType == .some(nil))

        try await withServer(Self.headerEcho) { server, session in
            let seen = Recorder()
            let plugin = AccessTokenPlugin { _, target in
                switch target as? Account {
                case .me: seen.add("me")
                case .publicInfo: seen.add("public")
                case nil: seen.add("not an Account: \(type(of: target))")
                }
                return "t0k"
            }
            let provider = Provider<MultiTarget>(session: session, plugins: [plugin])
            let lines = try await provider.request(MultiTarget(Account.me(base: server.baseURL))).data.text
            _ = try await provider.request(MultiTarget(Account.publicInfo(base: server.baseURL)))
            #expect(lines.split(separator: "\n").contains("Authorization: Bearer t0k"))
            #expect(seen.all == ["me"])
        }
    }

    // MARK: The logger shows what is sent

    @Test func loggerShowsTheSessionsDefaultFields() async throws {
        try await withServer(Self.headerEcho) { server, session in
            let lines = Recorder()
            let logger = Logger(label: "test") { _ in CapturingLogHandler(store: lines) }
            let plugin = NetworkLoggerPlugin(
                configuration: .init(logger: logger, logOptions: [.requestMethod, .requestHeaders]))
            let curl = NetworkLoggerPlugin(configuration: .init(logger: logger, logOptions: [.formatRequestAscURL]))
            var target = Local(server, "/")
            target.headers = ["Accept": "application/json"]
            let provider = Provider<Local>(session: session, plugins: [plugin, curl])
            let received = try await provider.request(target).data.text.split(separator: "\n")
            let userAgent = try #require(received.first { $0.hasPrefix("User-Agent: ") })
            let acceptEncoding = try #require(received.first { $0.hasPrefix("Accept-Encoding: ") })
            #expect(userAgent == "User-Agent: Curlew/0.1")
            let logged = lines.all
            #expect(logged.count == 4)
            #expect(
                logged.first
                    == "info: Request: GET \(server.url("/"))\nRequest headers: [\(userAgent), \(acceptEncoding), Accept: application/json]")
            #expect(
                logged.dropFirst().first
                    == "info: Request: curl -H '\(userAgent)' -H '\(acceptEncoding)' -H 'Accept: application/json' --compressed '\(server.url("/"))'"
            )
        }
    }

    // MARK: Response equality per Moya: status, data and the response head

    @Test func responsesCompareByStatusDataAndHeadNotByRequest() {
        let head: HTTPFields = [.contentType: "text/plain"]
        let one = ApiResponse(
            statusCode: 200, data: Data("a".utf8), request: TransportRequest(url: "https://example.com/one"),
            headerFields: head)
        let two = ApiResponse(
            statusCode: 200, data: Data("a".utf8), request: TransportRequest(url: "https://example.com/two"),
            headerFields: head)
        #expect(one == two)
        #expect(one != ApiResponse(statusCode: 200, data: Data("a".utf8), headerFields: [:]))
        #expect(one != ApiResponse(statusCode: 201, data: Data("a".utf8), headerFields: head))
        #expect(one != ApiResponse(statusCode: 200, data: Data("b".utf8), headerFields: head))
    }
}
