// Curlew — redirects seen through the provider: what a target, an endpoint and plugins add stays home.

import Curlew
import CurlewTesting
import Foundation
import Testing

@Suite struct ProviderRedirectTests {
    struct ApiKeyPlugin: PluginType {
        func prepare(_ request: TransportRequest, target: any TargetType) async throws -> TransportRequest {
            var request = request
            try request.setValue("k-123", forHTTPHeaderField: "X-Api-Key")
            return request
        }
    }

    @Test func credentialsFromTargetsEndpointsAndPluginsDoNotFollowToAnotherOrigin() async throws {
        let elsewhere = try await LocalHTTPServer.start { _ in .json(#"{"ok":true}"#) }
        try await withServer({ _ in .respond(status: 302, headers: [("Location", elsewhere.url("/landing"))]) }) {
            server, session in
            var target = Local(server, "/start")
            target.headers = ["X-Tenant": "acme", "Cookie": "session=1", "Accept": "application/json"]
            target.authorizationType = .bearer
            let provider = Provider<Local>(
                endpointClosure: { target in
                    Endpoint.default(for: target).adding(newHTTPHeaderFields: ["X-Client": "app/1.0"])
                },
                session: session, plugins: [AccessTokenPlugin { _, _ in "secret" }, ApiKeyPlugin()])
            let response = try await provider.request(target)
            #expect(response.statusCode == 200)
            #expect(response.finalURL == elsewhere.url("/landing"))
            #expect(response.redirectChain == [RedirectStep(url: server.url("/start"), status: .found)])
            let first = try #require(server.requests.first)
            #expect(first.header("Authorization") == "Bearer secret")
            #expect(first.header("X-Api-Key") == "k-123")
            let landed = try #require(elsewhere.requests.first)
            for name in ["Authorization", "X-Api-Key", "X-Tenant", "X-Client", "Cookie"] {
                #expect(landed.header(name) == nil, "\(name) followed the redirect")
            }
            #expect(landed.header("Accept") == "application/json")
        }
        try await elsewhere.shutdown()
    }

    @Test func stubsHaveNoChainAndTheirRequestURL() async throws {
        let provider = Provider<GitHub>(stubClosure: Provider.immediatelyStub)
        let response = try await provider.request(.zen)
        #expect(response.redirectChain.isEmpty)
        #expect(response.finalURL == "https://api.github.com/zen")
    }
}
