// Curlew — a provider's base URL from configuration, and the process-wide session made on first use.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

/// Targets naming a production host that does not resolve: only a provider's `baseURL` reaches a server.
private enum Upstream: TargetType {
    case user(Int)
    case root
    case search(String)

    var baseURL: URL { URL(string: "https://upstream.invalid/v1")! }
    var path: String {
        switch self {
        case .user(let id): "/users/\(id)"
        case .root: ""
        case .search: "search"
        }
    }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask {
        switch self {
        case .search(let query): .requestParameters(parameters: ["q": .string(query)], encoding: URLEncoding.queryString)
        default: .requestPlain
        }
    }
    var headers: [String: String]? { nil }
}

@Suite struct ProviderBaseURLTests {
    private func url(_ provider: Provider<Upstream>, _ target: Upstream) -> String {
        provider.endpointClosure(target).url
    }

    @Test func theDefaultEndpointsAreJoinedToTheConfiguredBase() {
        let provider = Provider<Upstream>(baseURL: URL(string: "http://10.0.0.7:8080/api")!)
        #expect(url(provider, .user(7)) == "http://10.0.0.7:8080/api/users/7")
        #expect(url(provider, .root) == "http://10.0.0.7:8080/api")
        #expect(url(provider, .search("x")) == "http://10.0.0.7:8080/api/search")
        let slashed = Provider<Upstream>(baseURL: URL(string: "http://10.0.0.7/api/")!)
        #expect(url(slashed, .user(7)) == "http://10.0.0.7/api/users/7")
        #expect(url(Provider<Upstream>(), .user(7)) == "https://upstream.invalid/v1/users/7")
    }

    @Test func anEndpointClosureStartingFromTheDefaultIsRebased() {
        let provider = Provider<Upstream>(
            endpointClosure: { Endpoint.default(for: $0).adding(newHTTPHeaderFields: ["X-Tenant": "acme"]) },
            baseURL: URL(string: "http://10.0.0.7:8080")!)
        let endpoint = provider.endpointClosure(.user(7))
        #expect(endpoint.url == "http://10.0.0.7:8080/users/7")
        #expect(endpoint.httpHeaderFields == ["X-Tenant": "acme"])
        #expect(provider.endpointClosure(.root).url == "http://10.0.0.7:8080")
    }

    @Test func aURLTheClosureBuiltFromElsewhereIsLeftAlone() {
        @Sendable func endpoint(_ url: String) -> Endpoint {
            Endpoint(url: url, sampleResponseClosure: { .networkResponse(200, Data()) }, method: .get, task: .requestPlain, httpHeaderFields: nil)
        }
        let base = URL(string: "http://10.0.0.7")!
        let elsewhere = Provider<Upstream>(endpointClosure: { _ in endpoint("https://other.invalid/v1/x") }, baseURL: base)
        #expect(url(elsewhere, .root) == "https://other.invalid/v1/x")
        // The same characters, but not the base followed by a path: another path on that host.
        let sibling = Provider<Upstream>(endpointClosure: { _ in endpoint("https://upstream.invalid/v12/x") }, baseURL: base)
        #expect(url(sibling, .root) == "https://upstream.invalid/v12/x")
        let query = Provider<Upstream>(endpointClosure: { _ in endpoint("https://upstream.invalid/v1?a=1") }, baseURL: base)
        #expect(url(query, .root) == "http://10.0.0.7?a=1")
    }

    @Test func requestsGoToTheConfiguredServer() async throws {
        try await withServer({ request in .text("\(request.method) \(request.uri)") }) { server, session in
            let provider = Provider<Upstream>(baseURL: URL(string: server.baseURL + "/api")!, session: session)
            let user = try await provider.request(.user(42))
            #expect(user.statusCode == 200)
            #expect(String(decoding: user.data, as: UTF8.self) == "GET /api/users/42")
            let search = try await provider.request(.search("a b"))
            #expect(String(decoding: search.data, as: UTF8.self) == "GET /api/search?q=a%20b")
            #expect(server.requests.map(\.path) == ["/api/users/42", "/api/search"])
        }
    }

    /// In a process of its own (the suite's other tests use the shared session): making a provider without
    /// a session starts nothing; its first request makes the process-wide session.
    @Test func theProcessWideSessionIsMadeOnTheFirstRequest() async throws {
        let probe = try #require(siblingExecutable("SharedSessionProbe"), "SharedSessionProbe was not built beside the test binary")
        try await withServer({ request in .text("pong \(request.path)") }) { server, _ in
            let outcome = try await TestProcess.run(
                executable: probe, arguments: [server.baseURL + "/base"], timeout: .seconds(60), name: "SharedSessionProbe")
            #expect(outcome.status == 0, "stderr: \(outcome.standardError)")
            let report = try JSONDecoder().decode([String: String].self, from: outcome.standardOutput)
            #expect(report["threadsAddedByProvider"] == "0")
            #expect(report["sharedMadeByProvider"] == "false")
            #expect(report["status"] == "200", "\(report)")
            #expect(report["body"] == "pong /base/ping")
            #expect(report["url"] == server.baseURL + "/base/ping")
            #expect(report["sharedMadeByRequest"] == "true")
        }
    }
}

