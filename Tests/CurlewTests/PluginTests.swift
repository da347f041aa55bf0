// Curlew — the shipped plugins: activity, logger, access token, credentials; over a MockTransport, and
// over real HTTP where what they show depends on what libcurl adds.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Logging
import Testing

/// A swift-log handler that keeps messages in memory.
struct CapturingLogHandler: LogHandler {
    let store: Recorder
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.add("\(event.level): \(event.message)")
    }
}

@Suite struct PluginTests {
    /// The Accept-Encoding list the loaded libcurl decodes (Debian's builds: all four).
    static let acceptEncoding = "deflate, gzip"

    static let echo: LocalHTTPServer.Handler = { request in
        .json(#"{"auth":"\#(request.header("Authorization") ?? "")"}"#)
    }

    @Test func networkActivityBeganAndEnded() async throws {
        let changes = Recorder()
        let transport = MockTransport { request throws(TransportError) in
            changes.add("sent \(request.url)")
            return TransportResponse(status: .ok, httpVersion: .http1_1)
        }
        let plugin = NetworkActivityPlugin { change, target in changes.add("\(change) \(target.path)") }
        let provider = Provider<GitHub>(session: transport, plugins: [plugin])
        _ = try await provider.request(.zen)
        #expect(changes.all == ["began /zen", "sent https://api.github.com/zen", "ended /zen"])
        let stubbed = Provider<GitHub>(stubClosure: Provider.immediatelyStub, session: transport, plugins: [plugin])
        _ = try await stubbed.request(.zen)
        #expect(changes.all == ["began /zen", "sent https://api.github.com/zen", "ended /zen", "began /zen", "ended /zen"])
        #expect(transport.requests.count == 1)
    }

    @Test func loggerWritesACurlCommandAndRedactsSecrets() async throws {
        try await withServer(Self.echo) { server, session in
            let lines = Recorder()
            let logger = Logger(label: "test") { _ in CapturingLogHandler(store: lines) }
            let plugin = NetworkLoggerPlugin(
                configuration: .init(logger: logger, logOptions: [.formatRequestAscURL, .successResponseBody], redactedHeaders: ["X-Api-Key"]))
            var target = Local(server, "/login", method: .post, task: .requestData(Data("it's".utf8)))
            target.headers = ["Authorization": "Bearer secret", "X-Api-Key": "k", "Accept": "application/json", "Cookie": "c=1"]
            let provider = Provider<Local>(session: session, plugins: [plugin])
            _ = try await provider.request(target)
            let all = lines.all
            #expect(all.count == 2)
            #expect(
                all.first
                    == "info: Request: curl -X POST -H 'User-Agent: Curlew/0.1' -H 'Accept-Encoding: \(Self.acceptEncoding)' -H 'Accept: application/json' -H 'Authorization: <redacted>' -H 'Cookie: <redacted>' -H 'X-Api-Key: <redacted>' --data-binary 'it'\\''s' --compressed '\(server.url("/login"))'"
            )
            #expect(all.last == "info: Response: 200 for \(server.url("/login")) (24 bytes)\nResponse body: {\"auth\":\"Bearer secret\"}")
            #expect(!all.joined().contains("Cookie: c=1"))
        }
    }

    @Test func loggerLogsFailuresAsErrors() async throws {
        let lines = Recorder()
        let logger = Logger(label: "test") { _ in CapturingLogHandler(store: lines) }
        let failure = TransportError(
            .dnsFailure, message: "Could not resolve host: no-such-host.invalid", curlCode: 6,
            url: "http://no-such-host.invalid/", method: "GET")
        let transport = MockTransport(replies: [.failure(failure)])
        let provider = Provider<Local>(
            session: transport, plugins: [NetworkLoggerPlugin(configuration: .init(logger: logger, logOptions: []))])
        var target = Local(exampleAPI: "/")
        target.base = "http://no-such-host.invalid"
        let error = await curlewError { try await provider.request(target) }
        guard case .transport(let thrown) = error else {
            Issue.record("expected transport, got \(String(describing: error))")
            return
        }
        #expect(thrown == failure)
        #expect(
            lines.all == [
                "error: Request failed: TransportError.dnsFailure: Could not resolve host: no-such-host.invalid [GET http://no-such-host.invalid/] (curl 6)"
            ])
    }

    @Test(arguments: [
        (AuthorizationType.bearer, "Bearer tok"),
        (.basic, "Basic tok"),
        (.custom("Token"), "Token tok"),
    ])
    func accessTokenForTargetsThatOptIn(type: AuthorizationType, expected: String) async throws {
        let transport = MockTransport(replies: [.status(200), .status(200)])
        let plugin = AccessTokenPlugin { _, _ in "tok" }
        let provider = Provider<Local>(session: transport, plugins: [plugin])
        var target = Local(exampleAPI: "/")
        target.authorizationType = type
        _ = try await provider.request(target)
        target.authorizationType = nil
        _ = try await provider.request(target)
        #expect(transport.requests.map { $0.headerFields[values: .authorization] } == [[expected], []])
    }

    @Test func accessTokenThroughMultiTarget() async throws {
        let transport = MockTransport(replies: [.status(200)])
        var target = Local(exampleAPI: "/")
        target.authorizationType = .bearer
        let provider = Provider<MultiTarget>(session: transport, plugins: [AccessTokenPlugin { _, _ in "m" }])
        _ = try await provider.request(MultiTarget(target))
        #expect(transport.requests.map { $0.headerFields[values: .authorization] } == [["Bearer m"]])
    }

    @Test func credentialsSendBasicAuthorization() async throws {
        let transport = MockTransport(replies: [.status(200)])
        let plugin = CredentialsPlugin { _ in Credentials(user: "Aladdin", password: "open sesame") }
        let provider = Provider<Local>(session: transport, plugins: [plugin])
        _ = try await provider.request(Local(exampleAPI: "/"))
        #expect(transport.requests.map { $0.headerFields[values: .authorization] } == [["Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="]])
    }

    @Test func loggerFormatterAndOutputAreTheUsers() async throws {
        try await withServer(Self.echo) { server, session in
            let delivered = Recorder()
            let configuration = NetworkLoggerPlugin.Configuration(
                logOptions: [.requestMethod, .requestHeaders, .requestBody, .successResponseBody],
                redactedHeaders: ["user-agent", "accept-encoding"],
                formatter: .init(
                    entry: { identifier, message, target in "[\(target.path)] \(identifier) = \(message)" },
                    requestData: { data in "<\(data.count) bytes>" },
                    responseData: { data in data.text.uppercased() }),
                output: { target, entries, level in
                    delivered.add("\(level) \(type(of: target)) \(entries.joined(separator: " | "))")
                })
            let provider = Provider<MultiTarget>(session: session, plugins: [NetworkLoggerPlugin(configuration: configuration)])
            var target = Local(server, "/p", method: .post, task: .requestData(Data("12345".utf8)))
            target.base = "http://user:hunter2@127.0.0.1:\(server.port)"
            _ = try await provider.request(MultiTarget(target))
            let url = "http://user:<redacted>@127.0.0.1:\(server.port)/p"
            #expect(
                delivered.all == [
                    "info Local [/p] Request = POST \(url) | [/p] Request headers = [User-Agent: <redacted>, Accept-Encoding: <redacted>, Authorization: <redacted>] | [/p] Request body = <5 bytes>",
                    // libcurl sends the URL's credentials as Basic authorization: user:hunter2.
                    "info Local [/p] Response = 200 for \(url) (33 bytes) | [/p] Response body = {\"AUTH\":\"BASIC DXNLCJPODW50ZXIY\"}",
                ])
        }
    }

    @Test func requestClosuresAndPluginsReplaceFieldsWhateverTheCase() async throws {
        struct ApiKey: PluginType {
            func prepare(_ request: TransportRequest, target: any TargetType) async throws -> TransportRequest {
                var request = request
                try request.setValue("from-plugin", forHTTPHeaderField: "x-api-key")
                try request.addValue("b", forHTTPHeaderField: "X-Multi")
                return request
            }
        }
        let transport = MockTransport(replies: [.status(200)])
        let provider = Provider<Local>(
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                try request.setValue("text/csv", forHTTPHeaderField: "CONTENT-TYPE")
                #expect(request.value(forHTTPHeaderField: "content-type") == "text/csv")
                return request
            }, session: transport, plugins: [ApiKey()])
        var target = Local(exampleAPI: "/", method: .post, task: .requestData(Data("a,b".utf8)))
        target.headers = ["Content-Type": "text/plain", "X-Api-Key": "from-target", "X-Multi": "a"]
        _ = try await provider.request(target)
        #expect(transport.requests.count == 1)
        let sent = try #require(transport.requests.first)
        // The fields as they are sent, with the case of their names as given.
        let lines = sent.headerFields.map { "\($0.name.rawName): \($0.value)" }
        #expect(lines.filter { $0.lowercased().hasPrefix("content-type:") } == ["CONTENT-TYPE: text/csv"])
        #expect(lines.filter { $0.lowercased().hasPrefix("x-api-key:") } == ["x-api-key: from-plugin"])
        #expect(lines.filter { $0.lowercased().hasPrefix("x-multi:") } == ["X-Multi: a", "X-Multi: b"])
        #expect(sent.body?.inMemoryBytes?.text == "a,b")
        var request = TransportRequest(url: "https://example.com")
        #expect(throws: TransportError.self) { try request.setValue("a\r\nInjected: 1", forHTTPHeaderField: "X-A") }
        #expect(throws: TransportError.self) { try request.setValue("a", forHTTPHeaderField: "Bad Name") }
        #expect(request.headerFields.isEmpty)
        try request.setValue("1", forHTTPHeaderField: "X-A")
        try request.setValue(nil, forHTTPHeaderField: "x-a")
        #expect(request.headerFields.isEmpty)
    }
}
