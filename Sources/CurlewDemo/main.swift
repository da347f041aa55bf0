// Curlew — the demo walk-through (`make demo`): real calls against an embedded GitHub-like API.

import Curlew
import CurlewTesting
import Foundation
import Logging

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardOutput(label: label)
    handler.logLevel = .info
    return handler
}

// The one session the demo uses. It refuses a libcurl older than Curlew's floor with a typed error
// naming both versions.
let session: CurlSession
do {
    session = try CurlSession()
} catch {
    print("Cannot start a Curlew session: \(error)")
    exit(1)
}

let server = try await DemoAPI.start()
print("Embedded demo API listening on \(server.baseURL)\n")

func section(_ title: String) { print("\n== \(title) ==") }

// 1. The engine on its own.
section("1. The engine: CurlSession.execute")
let zen = try await session.execute(TransportRequest(url: server.url("/zen")))
print("GET /zen -> \(zen.status.code) \(zen.httpVersion.rawValue): \"\(String(decoding: zen.body, as: UTF8.self))\"")
print("   connection reused: \(zen.connectionReused), total \(zen.timings.total), first byte \(zen.timings.firstByte)")
let again = try await session.execute(TransportRequest(url: server.url("/zen")))
print("GET /zen again -> connection reused: \(again.connectionReused)")

// 2. Typed targets through the provider.
section("2. A provider over a target enum")
let provider = Provider<DemoTarget>(endpointClosure: server.endpointMapping(), session: session)
let profile = try await provider.request(.userProfile("octocat"))
print("GET /users/octocat -> \(profile.statusCode), \(profile.data.count) bytes")
let user = try profile.map(DemoUser.self)
print("   decoded: \(user.login) (\(user.name)), \(user.publicRepos) public repos")
let repos = try await provider.request(.userRepositories("octocat")).map([DemoRepo].self)
print("GET /users/octocat/repos -> \(repos.map(\.name).joined(separator: ", "))")

// 3. ApiResult: success, an expected API error, an unexpected one.
section("3. ApiResult by status code")
for (label, target) in [
    ("login with the right password", DemoTarget.login(username: "octocat", password: "hunter2")),
    ("login with a wrong password", DemoTarget.login(username: "octocat", password: "guess")),
    ("an endpoint that fails with an HTML 500", DemoTarget.broken),
] {
    let result = try await provider.request(target, as: DemoToken.self)
    switch result {
    case .success(let token, let response):
        print("\(label): \(response.statusCode) success, token \(token.token.prefix(8))…, expires in \(token.expiresIn) s")
    case .failure(let message, let response):
        print("\(label): \(response.statusCode) API error: \"\(message.errorMessage)\"")
    case .unexpected(let error, let response):
        print("\(label): \(response.statusCode) unexpected: \(error.message) (\(error.body.count) raw bytes kept)")
    }
}

// 4. Stubs: the same targets answered from sample data, no network.
section("4. A stubbed provider")
let stubbed = Provider<DemoTarget>(stubClosure: Provider.immediatelyStub)
let stubbedZen = try await stubbed.request(.zen).mapString()
print("stubbed GET /zen -> \"\(stubbedZen)\"")

// 5. The logger plugin, with a reproducible curl command and redacted secrets.
section("5. The logger plugin")
var loggerConfiguration = NetworkLoggerPlugin.Configuration(logOptions: [.formatRequestAscURL])
loggerConfiguration.logger = Logger(label: "demo.network")
let logged = Provider<DemoTarget>(
    endpointClosure: server.endpointMapping(),
    session: session,
    plugins: [
        NetworkLoggerPlugin(configuration: loggerConfiguration),
        AccessTokenPlugin(tokenClosure: { _, _ in "s3cr3t-token" }),
    ])
_ = try await logged.request(.userProfile("octocat"))

// 6. Cancelling a slow call frees its connection at once.
section("6. Cancelling a slow call")
let started = ContinuousClock.now
let slow = Task { try await provider.request(.slow) }
try await Task.sleep(for: .milliseconds(200))
slow.cancel()
do {
    _ = try await slow.value
    print("the slow call finished?")
} catch let error as CurlewError where error.isCancellation {
    print("cancelled after \(ContinuousClock.now - started): \(error)")
}

await session.shutdown()
try await server.shutdown()
print("\nDone.")
