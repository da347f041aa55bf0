// Curlew — the provider over real HTTP: stages in order, closures, validation, ApiResult, cancellation.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

@Suite struct ProviderTests {
    static let api: LocalHTTPServer.Handler = { request in
        switch request.path {
        case "/echo":
            return .json(
                #"{"method":"\#(request.method)","query":"\#(request.uri)","auth":"\#(request.header("Authorization") ?? "")","plugin":"\#(request.header("X-Plugin-A") ?? "")","body":\#(request.body.isEmpty ? "null" : "\"\(request.bodyText)\"")}"#
            )
        case "/login":
            return request.bodyText.contains("hunter2")
                ? .json(#"{"token":"t0k","expires_in":3600}"#)
                : .json(#"{"error_message":"Invalid username or password"}"#, status: 401)
        case "/html500": return .html("<h1>Internal Server Error</h1>", status: 500)
        case "/empty502": return .respond(status: 502)
        case "/teapot": return .text("short and stout", status: 418)
        case "/hang": return .hang
        default: return .json(#"{"error_message":"Not Found"}"#, status: 404)
        }
    }

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
        try await withServer(Self.api) { server, session in
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
                session: session, plugins: plugins)
            let response = try await provider.request(Local(server, "/echo"))
            #expect(try response.mapString(atKeyPath: "plugin") == "yes")
            #expect(
                recorder.all == [
                    "endpoint", "request", "A.prepare", "B.prepare", "A.willSend", "B.willSend", "A.didReceive(200)",
                    "B.didReceive(200)", "A.process", "B.process",
                ])
            let stubRecorder = Recorder()
            let stubbed = Provider<Local>(stubClosure: Provider.immediatelyStub, plugins: [RecordingPlugin(name: "S", recorder: stubRecorder)])
            _ = try await stubbed.request(Local(server, "/echo"))
            #expect(stubRecorder.all == ["S.prepare", "S.willSend", "S.didReceive(200)", "S.process"])
            #expect(server.statistics.requestsReceived == 1)
        }
    }

    @Test func requestClosureCanModifyOrFail() async throws {
        try await withServer(Self.api) { server, session in
            let signing = Provider<Local>(
                requestClosure: { endpoint in
                    var request = try endpoint.urlRequest()
                    request.headerFields[.authorization] = "Signed abc"
                    return request
                }, session: session)
            let observed1 = try await signing.request(Local(server, "/echo")).mapString(atKeyPath: "auth")
            #expect(observed1 == "Signed abc")

            struct Refused: Error {}
            let refusing = Provider<Local>(requestClosure: { _ in throw Refused() }, session: session)
            let error = await curlewError { try await refusing.request(Local(server, "/echo")) }
            guard case .underlying(let underlying, nil) = error else {
                Issue.record("expected underlying, got \(String(describing: error))")
                return
            }
            #expect(underlying is Refused)
            #expect(server.statistics.requestsReceived == 1)
        }
    }

    @Test func stubBehaviours() async throws {
        let target = GitHub.zen
        let immediate = Provider<GitHub>(stubClosure: Provider.immediatelyStub)
        let observed2 = try await immediate.request(target).mapString()
        #expect(observed2 == "Half measures are as bad as nothing at all.")
        let delayed = Provider<GitHub>(stubClosure: Provider.delayedStub(.milliseconds(50)))
        let started = ContinuousClock.now
        let profile = try await delayed.request(.userProfile("ashfurrow"))
        // The stub's delay is a lower bound (a loaded machine can only lengthen the interval).
        #expect(ContinuousClock.now - started >= .milliseconds(50))
        #expect(try profile.mapString(atKeyPath: "login") == "ashfurrow")
        let perTarget = Provider<GitHub>(stubClosure: { target in
            if case .zen = target { return .immediate }
            return .never
        })
        let observed3 = try await perTarget.request(.zen).statusCode
        #expect(observed3 == 200)
    }

    @Test func sampleResponseKinds() async throws {
        struct Failing: Error {}
        for (sample, check) in [
            (EndpointSampleResponse.networkResponse(201, Data("a".utf8)), { (r: Result<ApiResponse, CurlewError>) in (try? r.get().statusCode) == 201 }),
            (.response(status: 202, headers: ["X-Stub": "1"], data: Data()), { r in (try? r.get().headerFields[HTTPField.Name("X-Stub")!]) == "1" }),
            (.networkError(Failing()), { r in
                if case .failure(.underlying(let error, nil)) = r { return error is Failing }
                return false
            }),
        ] {
            let provider = Provider<GitHub>(
                endpointClosure: { target in
                    Endpoint(url: Endpoint.defaultURL(for: target), sampleResponseClosure: { sample }, method: target.method, task: target.task, httpHeaderFields: nil)
                }, stubClosure: Provider.immediatelyStub)
            let result: Result<ApiResponse, CurlewError>
            do { result = .success(try await provider.request(.zen)) } catch { result = .failure(error) }
            #expect(check(result))
        }
    }

    @Test func validationFailsAlikeForStubbedAndRealResponses() async throws {
        try await withServer(Self.api) { server, session in
            var target = Local(server, "/teapot")
            target.validationType = .successCodes
            target.sampleData = Data("stub".utf8)
            let real = Provider<Local>(session: session)
            let stubbed = Provider<Local>(
                endpointClosure: { target in
                    Endpoint(url: Endpoint.defaultURL(for: target), sampleResponseClosure: { .networkResponse(418, target.sampleData) }, method: .get, task: .requestPlain, httpHeaderFields: nil)
                }, stubClosure: Provider.immediatelyStub)
            for provider in [real, stubbed] {
                let error = await curlewError { try await provider.request(target) }
                guard case .statusCode(let response) = error else {
                    Issue.record("expected statusCode, got \(String(describing: error))")
                    continue
                }
                #expect(response.statusCode == 418)
                #expect(!response.data.isEmpty)
            }
            var accepting = target
            accepting.validationType = .customCodes([418])
            let observed4 = try await real.request(accepting).statusCode
            #expect(observed4 == 418)
        }
    }

    @Test func apiResultOverTheNetwork() async throws {
        try await withServer(Self.api) { server, session in
            let provider = Provider<Local>(session: session)
            func login(_ password: String) -> Local {
                Local(server, "/login", method: .post, task: .requestParameters(parameters: ["user": "a", "password": .string(password)], encoding: JSONEncoding.default))
            }
            let ok = try await provider.request(login("hunter2"), as: Token.self)
            #expect(ok.value == Token(token: "t0k", expires_in: 3600))
            let denied = try await provider.request(login("guess"), as: Token.self)
            #expect(denied.errorMessage?.errorMessage == "Invalid username or password")
            #expect(denied.statusCode == 401)
            let html = try await provider.request(Local(server, "/html500"), as: Token.self)
            #expect(html.unexpectedError?.statusCode == 500)
            #expect(html.unexpectedError?.body.text == "<h1>Internal Server Error</h1>")
            let empty = try await provider.request(Local(server, "/empty502"), as: Token.self)
            #expect(empty.unexpectedError?.statusCode == 502)
            let wrongShape = await curlewError { try await provider.request(Local(server, "/echo"), as: Token.self) }
            guard case .objectMapping = wrongShape else {
                Issue.record("expected objectMapping, got \(String(describing: wrongShape))")
                return
            }
            struct NotFound: Decodable, Sendable { let error_message: String }
            let custom = try await provider.request(Local(server, "/nope"), as: Token.self, errorMessage: NotFound.self)
            #expect(custom.errorMessage?.error_message == "Not Found")
        }
    }

    @Test func errorMessageTypePerProviderAndDecoderPerProvider() async throws {
        struct Problem: Decodable, Sendable, Equatable { let errorMessage: String }
        struct ProblemTarget: ApiErrorMessageTarget {
            typealias ErrorMessage = Problem
            let base: String
            var baseURL: URL { URL(string: base)! }
            var path: String { "/nope" }
            var method: HTTPMethod { .get }
            var task: RequestTask { .requestPlain }
            var headers: [String: String]? { nil }
        }
        try await withServer(Self.api) { server, session in
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            let provider = Provider<ProblemTarget>(session: session, decoder: decoder)
            let result = try await provider.request(ProblemTarget(base: server.baseURL), as: Token.self)
            #expect(result.errorMessage == Problem(errorMessage: "Not Found"))
        }
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
        let stubbed = Provider<GitHub>(stubClosure: Provider.delayedStub(.seconds(30)))
        let stubTask = Task { try await stubbed.request(.zen) }
        try await Task.sleep(for: .milliseconds(50))
        stubTask.cancel()
        #expect(await curlewError { try await stubTask.value }?.isCancellation == true)

        let slowClosure = Provider<GitHub>(requestClosure: { endpoint in
            try await Task.sleep(for: .seconds(30))
            return try endpoint.urlRequest()
        })
        let closureTask = Task { try await slowClosure.request(.zen) }
        try await Task.sleep(for: .milliseconds(50))
        closureTask.cancel()
        #expect(await curlewError { try await closureTask.value }?.isCancellation == true)
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
