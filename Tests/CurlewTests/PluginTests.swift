// Curlew — the shipped plugins: activity, logger, access token, credentials.

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
    /// The Accept-Encoding list this machine's libcurl decodes (Debian's 7.88 build: all four).
    static let acceptEncoding = "deflate, gzip, br, zstd"

    static let echo: LocalHTTPServer.Handler = { request in
        .json(#"{"auth":"\#(request.header("Authorization") ?? "")"}"#)
    }

    @Test func networkActivityBeganAndEnded() async throws {
        let changes = Recorder()
        let plugin = NetworkActivityPlugin { change, target in changes.add("\(change) \(target.path)") }
        let provider = Provider<GitHub>(stubClosure: Provider.immediatelyStub, plugins: [plugin])
        _ = try await provider.request(.zen)
        #expect(changes.all == ["began /zen", "ended /zen"])
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
        let provider = Provider<Local>(plugins: [NetworkLoggerPlugin(configuration: .init(logger: logger, logOptions: []))])
        var target = try await LocalHTTPServer.start(handler: { _ in .text("") }).withShutdown { Local($0, "/") }
        target.base = "http://no-such-host.invalid"
        _ = await curlewError { try await provider.request(target) }
        #expect(lines.all.count == 1)
        #expect(lines.all.first?.hasPrefix("error: Request failed: TransportError.dnsFailure") == true)
    }

    @Test(arguments: [
        (AuthorizationType.bearer, "Bearer tok"),
        (.basic, "Basic tok"),
        (.custom("Token"), "Token tok"),
    ])
    func accessTokenForTargetsThatOptIn(type: AuthorizationType, expected: String) async throws {
        try await withServer(Self.echo) { server, session in
            let plugin = AccessTokenPlugin { _, _ in "tok" }
            let provider = Provider<Local>(session: session, plugins: [plugin])
            var target = Local(server, "/")
            target.authorizationType = type
            let observed1 = try await provider.request(target).mapString(atKeyPath: "auth")
            #expect(observed1 == expected)
            target.authorizationType = nil
            let observed2 = try await provider.request(target).mapString(atKeyPath: "auth")
            #expect(observed2 == "")
        }
    }

    @Test func accessTokenThroughMultiTarget() async throws {
        try await withServer(Self.echo) { server, session in
            var target = Local(server, "/")
            target.authorizationType = .bearer
            let provider = Provider<MultiTarget>(session: session, plugins: [AccessTokenPlugin { _, _ in "m" }])
            let observed3 = try await provider.request(MultiTarget(target)).mapString(atKeyPath: "auth")
            #expect(observed3 == "Bearer m")
        }
    }

    @Test func credentialsSendBasicAuthorization() async throws {
        try await withServer(Self.echo) { server, session in
            let plugin = CredentialsPlugin { _ in Credentials(user: "Aladdin", password: "open sesame") }
            let provider = Provider<Local>(session: session, plugins: [plugin])
            let observed4 = try await provider.request(Local(server, "/")).mapString(atKeyPath: "auth")
            #expect(observed4 == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        }
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
        let headerEcho: LocalHTTPServer.Handler = { request in
            .text(request.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n"))
        }
        try await withServer(headerEcho) { server, session in
            let provider = Provider<Local>(
                requestClosure: { endpoint in
                    var request = try endpoint.urlRequest()
                    try request.setValue("text/csv", forHTTPHeaderField: "CONTENT-TYPE")
                    #expect(request.value(forHTTPHeaderField: "content-type") == "text/csv")
                    return request
                }, session: session, plugins: [ApiKey()])
            var target = Local(server, "/", method: .post, task: .requestData(Data("a,b".utf8)))
            target.headers = ["Content-Type": "text/plain", "X-Api-Key": "from-target", "X-Multi": "a"]
            let lines = try await provider.request(target).data.text.split(separator: "\n").map(String.init)
            #expect(lines.filter { $0.lowercased().hasPrefix("content-type:") } == ["CONTENT-TYPE: text/csv"])
            #expect(lines.filter { $0.lowercased().hasPrefix("x-api-key:") } == ["x-api-key: from-plugin"])
            #expect(lines.filter { $0.lowercased().hasPrefix("x-multi:") } == ["X-Multi: a", "X-Multi: b"])
        }
        var request = TransportRequest(url: "https://example.com")
        #expect(throws: TransportError.self) { try request.setValue("a\r\nInjected: 1", forHTTPHeaderField: "X-A") }
        #expect(throws: TransportError.self) { try request.setValue("a", forHTTPHeaderField: "Bad Name") }
        #expect(request.headerFields.isEmpty)
        try request.setValue("1", forHTTPHeaderField: "X-A")
        try request.setValue(nil, forHTTPHeaderField: "x-a")
        #expect(request.headerFields.isEmpty)
    }
}
