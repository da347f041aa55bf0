// Curlew — the provider: stages in order, closures, stubs, validation, ApiResult, cancellation; over a
// MockTransport, and over real HTTP where the transport's own behaviour is tested.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

@Suite struct ProviderTests {
    /// The server of the tests that go over the network.
    static let api: LocalHTTPServer.Handler = { request in
        switch request.path {
        case "/echo": return .json(#"{"method":"\#(request.method)","query":"\#(request.uri)"}"#)
        case "/hang": return .hang
        default: return .json(#"{"error_message":"Not Found"}"#, status: 404)
        }
    }

    static let json: HTTPFields = [.contentType: "application/json"]

    struct Token: Decodable, Equatable, Sendable {
        let token: String
        let expires_in: Int
    }

    @Test func requestGoesThroughTheRealServer() async throws {
        try await withServer(Self.api) { server, session in
            let provider = Provider<Local>(session: session)
            let response = try await provider.request(
                Local(server, "/echo", method: .post, task: .requestParameters(parameters: ["a": 1], encoding: URLEncoding.queryString)))
            #expect(response.statusCode == 200)
            #expect(try response.mapString(atKeyPath: "method") == "POST")
            #expect(try response.mapString(atKeyPath: "query") == "/echo?a=1")
            #expect(response.request?.url == server.url("/echo?a=1"))
            #expect(response.timings.total > .zero)
            #expect(response.transportResponse?.httpVersion == .http1_1)
        }
    }

    @Test func stagesRunInOrderAndPluginsSeeStubsToo() async throws {
        let transport = MockTransport(replies: [.status(200, body: "{}", headers: Self.json)])
        let recorder = Recorder()
        let plugins: [any PluginType] = [RecordingPlugin(name: "A", recorder: recorder), RecordingPlugin(name: "B", recorder: recorder)]
        let provider = Provider<Local>(
            endpointClosure: { target in
                recorder.add("endpoint")
                return Endpoint.default(for: target)
            },
            requestClosure: { endpoint in
                recorder.add("request")
                return try endpoint.urlRequest()
            },
            session: transport, plugins: plugins)
        let response = try await provider.request(Local(exampleAPI: "/echo"))
        #expect(response.statusCode == 200)
        let sent = try #require(transport.requests.first)
        #expect(sent.headerFields[HTTPField.Name("X-Plugin-A")!] == "yes")
        #expect(sent.headerFields[HTTPField.Name("X-Plugin-B")!] == "yes")
        #expect(
            recorder.all == [
                "endpoint", "request", "A.prepare", "B.prepare", "A.willSend", "B.willSend", "A.didReceive(200)",
                "B.didReceive(200)", "A.process", "B.process",
            ])
        let stubRecorder = Recorder()
        let stubbed = Provider<Local>(
            stubClosure: Provider.immediatelyStub, session: transport, plugins: [RecordingPlugin(name: "S", recorder: stubRecorder)])
        _ = try await stubbed.request(Local(exampleAPI: "/echo"))
        #expect(stubRecorder.all == ["S.prepare", "S.willSend", "S.didReceive(200)", "S.process"])
        #expect(transport.requests.map(\.url) == ["https://api.example.com/echo"])
    }

    @Test func requestClosureCanModifyOrFail() async throws {
        let transport = MockTransport(replies: [.status(200)])
        let signing = Provider<Local>(
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                request.headerFields[.authorization] = "Signed abc"
                return request
            }, session: transport)
        _ = try await signing.request(Local(exampleAPI: "/echo"))
        #expect(transport.requests.map { $0.headerFields[values: .authorization] } == [["Signed abc"]])

        struct Refused: Error {}
        let refusing = Provider<Local>(requestClosure: { _ in throw Refused() }, session: transport)
        let error = await curlewError { try await refusing.request(Local(exampleAPI: "/echo")) }
        guard case .underlying(let underlying, nil) = error else {
            Issue.record("expected underlying, got \(String(describing: error))")
            return
        }
        #expect(underlying is Refused)
        #expect(transport.requests.count == 1)
    }

    @Test func stubBehaviours() async throws {
        let transport = MockTransport(replies: [.status(204, body: "from the transport")])
        let target = GitHub.zen
        let immediate = Provider<GitHub>(stubClosure: Provider.immediatelyStub, session: transport)
        let observed2 = try await immediate.request(target).mapString()
        #expect(observed2 == "Half measures are as bad as nothing at all.")
        let delayed = Provider<GitHub>(stubClosure: Provider.delayedStub(.milliseconds(50)), session: transport)
        let profile = try await delayed.request(.userProfile("ashfurrow"))
        #expect(try profile.mapString(atKeyPath: "login") == "ashfurrow")
        let perTarget = Provider<GitHub>(
            stubClosure: { target in
                if case .zen = target { return .immediate }
                return .never
            }, session: transport)
        let observed3 = try await perTarget.request(.zen)
        #expect(observed3.statusCode == 200)
        #expect(observed3.data.text == "Half measures are as bad as nothing at all.")
        #expect(transport.requests.isEmpty)
        let notStubbed = try await perTarget.request(.userProfile("ashfurrow"))
        #expect(notStubbed.statusCode == 204)
        #expect(notStubbed.data.text == "from the transport")
        #expect(transport.requests.map(\.url) == ["https://api.github.com/users/ashfurrow"])
    }

    @Test func sampleResponseKinds() async throws {
        struct Failing: Error {}
        let transport = MockTransport(replies: [])
        for (sample, check) in [
            (EndpointSampleResponse.networkResponse(201, Data("a".utf8)), { (r: Result<ApiResponse, CurlewError>) in
                (try? r.get().statusCode) == 201 && (try? r.get().data.text) == "a"
            }),
            (.response(status: 202, headers: ["X-Stub": "1"], data: Data()), { r in (try? r.get().headerFields[HTTPField.Name("X-Stub")!]) == "1" }),
            (.networkError(Failing()), { r in
                if case .failure(.underlying(let error, nil)) = r { return error is Failing }
                return false
            }),
        ] {
            let provider = Provider<GitHub>(
                endpointClosure: { target in
                    Endpoint(url: Endpoint.defaultURL(for: target), sampleResponseClosure: { sample }, method: target.method, task: target.task, httpHeaderFields: nil)
                }, stubClosure: Provider.immediatelyStub, session: transport)
            let result: Result<ApiResponse, CurlewError>
            do { result = .success(try await provider.request(.zen)) } catch { result = .failure(error) }
            #expect(check(result))
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func validationFailsAlikeForStubbedAndRealResponses() async throws {
        let teapot = MockTransport.Reply.status(418, body: "short and stout", headers: [.contentType: "text/plain; charset=utf-8"])
        let transport = MockTransport(replies: [teapot, teapot])
        var target = Local(exampleAPI: "/teapot")
        target.validationType = .successCodes
        target.sampleData = Data("stub".utf8)
        let real = Provider<Local>(session: transport)
        let stubbed = Provider<Local>(
            endpointClosure: { target in
                Endpoint(url: Endpoint.defaultURL(for: target), sampleResponseClosure: { .networkResponse(418, target.sampleData) }, method: .get, task: .requestPlain, httpHeaderFields: nil)
            }, stubClosure: Provider.immediatelyStub, session: transport)
        for (provider, body) in [(real, "short and stout"), (stubbed, "stub")] {
            let error = await curlewError { try await provider.request(target) }
            guard case .statusCode(let response) = error else {
                Issue.record("expected statusCode, got \(String(describing: error))")
                continue
            }
            #expect(response.statusCode == 418)
            #expect(response.data.text == body)
        }
        #expect(transport.requests.count == 1)
        var accepting = target
        accepting.validationType = .customCodes([418])
        let observed4 = try await real.request(accepting)
        #expect(observed4.statusCode == 418)
        #expect(observed4.data.text == "short and stout")
        #expect(transport.requests.map(\.url) == Array(repeating: "https://api.example.com/teapot", count: 2))
    }

    @Test func apiResultFromEachKindOfResponse() async throws {
        let transport = MockTransport(replies: [
            .status(200, body: #"{"token":"t0k","expires_in":3600}"#, headers: Self.json),
            .status(401, body: #"{"error_message":"Invalid username or password"}"#, headers: Self.json),
            .status(500, body: "<h1>Internal Server Error</h1>", headers: [.contentType: "text/html; charset=utf-8"]),
            .status(502),
            .status(200, body: #"{"method":"GET","query":"/echo"}"#, headers: Self.json),
            .status(404, body: #"{"error_message":"Not Found"}"#, headers: Self.json),
        ])
        let provider = Provider<Local>(session: transport)
        func login(_ password: String) -> Local {
            Local(exampleAPI: "/login", method: .post, task: .requestParameters(parameters: ["user": "a", "password": .string(password)], encoding: JSONEncoding.default))
        }
        let ok = try await provider.request(login("hunter2"), as: Token.self)
        #expect(ok.value == Token(token: "t0k", expires_in: 3600))
        let denied = try await provider.request(login("guess"), as: Token.self)
        #expect(denied.errorMessage?.errorMessage == "Invalid username or password")
        #expect(denied.statusCode == 401)
        let html = try await provider.request(Local(exampleAPI: "/html500"), as: Token.self)
        #expect(html.unexpectedError?.statusCode == 500)
        #expect(html.unexpectedError?.body.text == "<h1>Internal Server Error</h1>")
        let empty = try await provider.request(Local(exampleAPI: "/empty502"), as: Token.self)
        #expect(empty.unexpectedError?.statusCode == 502)
        let wrongShape = await curlewError { try await provider.request(Local(exampleAPI: "/echo"), as: Token.self) }
        guard case .objectMapping = wrongShape else {
            Issue.record("expected objectMapping, got \(String(describing: wrongShape))")
            return
        }
        struct NotFound: Decodable, Sendable { let error_message: String }
        let custom = try await provider.request(Local(exampleAPI: "/nope"), as: Token.self, errorMessage: NotFound.self)
        #expect(custom.errorMessage?.error_message == "Not Found")
        let sent = transport.requests
        #expect(
            sent.map { "\($0.method.rawValue) \($0.url)" } == [
                "POST https://api.example.com/login", "POST https://api.example.com/login", "GET https://api.example.com/html500",
                "GET https://api.example.com/empty502", "GET https://api.example.com/echo", "GET https://api.example.com/nope",
            ])
        #expect(sent.prefix(2).map { $0.body?.inMemoryBytes?.text } == [#"{"password":"hunter2","user":"a"}"#, #"{"password":"guess","user":"a"}"#])
        #expect(sent.prefix(2).map { $0.headerFields[.contentType] } == ["application/json", "application/json"])
    }

    @Test func errorMessageTypePerProviderAndDecoderPerProvider() async throws {
        struct Problem: Decodable, Sendable, Equatable { let errorMessage: String }
        struct ProblemTarget: ApiErrorMessageTarget {
            typealias ErrorMessage = Problem
            let base: String
            var baseURL: URL { URL(string: base)! }
            var path: String { "/nope" }
            var method: HTTPRequest.Method { .get }
            var task: RequestTask { .requestPlain }
            var headers: [String: String]? { nil }
        }
        let transport = MockTransport(replies: [.status(404, body: #"{"error_message":"Not Found"}"#, headers: Self.json)])
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let provider = Provider<ProblemTarget>(session: transport, decoder: decoder)
        let result = try await provider.request(ProblemTarget(base: "https://api.example.com"), as: Token.self)
        #expect(result.errorMessage == Problem(errorMessage: "Not Found"))
        #expect(result.statusCode == 404)
        #expect(transport.requests.map(\.url) == ["https://api.example.com/nope"])
    }

    @Test func transportFailuresAreThrown() async throws {
        let provider = Provider<Local>()
        var target = try await LocalHTTPServer.start(handler: { _ in .text("") }).withShutdown { Local($0, "/") }
        target.base = "http://no-such-host.invalid"
        let error = await curlewError { try await provider.request(target) }
        guard case .transport(let transport) = error else {
            Issue.record("expected transport, got \(String(describing: error))")
            return
        }
        #expect(transport.code == .dnsFailure)
    }

    @Test func cancellingTheTaskCancelsTheTransferAndPluginsSeeIt() async throws {
        try await withServer(Self.api) { server, session in
            let recorder = Recorder()
            let provider = Provider<Local>(session: session, plugins: [RecordingPlugin(name: "P", recorder: recorder)])
            let task = Task { try await provider.request(Local(server, "/hang")) }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            task.cancel()
            let error = await curlewError { try await task.value }
            #expect(error?.isCancellation == true)
            #expect(recorder.all.contains("P.didReceive(cancelled)"))
            #expect(await eventually { server.statistics.connectionsClosed == 1 })
        }
    }

    @Test func cancellingCancelsADelayedStubAndARunningRequestClosure() async throws {
        let transport = MockTransport(replies: [])
        let stubbed = Provider<GitHub>(stubClosure: Provider.delayedStub(.seconds(30)), session: transport)
        let stubTask = Task { try await stubbed.request(.zen) }
        try await Task.sleep(for: .milliseconds(50))
        stubTask.cancel()
        #expect(await curlewError { try await stubTask.value }?.isCancellation == true)

        let slowClosure = Provider<GitHub>(
            requestClosure: { endpoint in
                try await Task.sleep(for: .seconds(30))
                return try endpoint.urlRequest()
            }, session: transport)
        let closureTask = Task { try await slowClosure.request(.zen) }
        try await Task.sleep(for: .milliseconds(50))
        closureTask.cancel()
        #expect(await curlewError { try await closureTask.value }?.isCancellation == true)
        #expect(transport.requests.isEmpty)
    }
}

extension Local {
    /// A target on `https://api.example.com`, for providers whose transport is a ``MockTransport``.
    init(exampleAPI path: String, method: HTTPRequest.Method = .get, task: RequestTask = .requestPlain) {
        base = "https://api.example.com"
        self.path = path
        self.method = method
        self.task = task
    }
}

extension LocalHTTPServer {
    /// Builds something from a running server, then stops it (for targets that must point nowhere).
    func withShutdown<T>(_ build: (LocalHTTPServer) -> T) async throws -> T {
        let value = build(self)
        try await shutdown()
        return value
    }
}
