// Curlew — the shipped plugins: activity, logger, access token, credentials.

import Curlew
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
                    == "info: Request: curl -X POST -H 'Accept: application/json' -H 'Authorization: <redacted>' -H 'Cookie: <redacted>' -H 'X-Api-Key: <redacted>' --data-binary 'it'\\''s' '\(server.url("/login"))'"
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
}
