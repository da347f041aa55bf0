// Curlew — the CurlewTesting product users import: the mock transport and endpoint mappings.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

@Suite struct TestingProductTests {
    struct Item: TargetType {
        var baseURL: URL
        var path: String = "/items/1"
        var method: HTTPRequest.Method = .get
        var task: RequestTask = .requestPlain
        var headers: [String: String]? = ["Accept": "application/json"]
    }

    @Test func mockTransportRecordsRequestsAndAnswersInOrder() async throws {
        let transport = MockTransport(replies: [
            .status(201, body: "made", headers: [.contentType: "text/plain"]),
            .failure(TransportError(.connectionReset, message: "peer reset")),
        ])
        let provider = Provider<Item>(session: transport)
        let target = Item(baseURL: URL(string: "https://api.example.com/v1")!)
        let first = try await provider.request(target)
        #expect(first.statusCode == 201)
        #expect(first.data.text == "made")
        #expect(first.headerFields[.contentType] == "text/plain")
        #expect(first.transportResponse?.effectiveURL == "https://api.example.com/v1/items/1")
        let second = await curlewError { try await provider.request(target) }
        guard case .transport(let failure) = second else {
            Issue.record("expected a transport error, got \(String(describing: second))")
            return
        }
        #expect(failure.code == .connectionReset)
        #expect(failure.message == "peer reset")
        let third = await curlewError { try await provider.request(target) }
        guard case .transport(let exhausted) = third else {
            Issue.record("expected a transport error, got \(String(describing: third))")
            return
        }
        #expect(exhausted.code == .curl)
        #expect(exhausted.message == "MockTransport has no scripted reply left for GET https://api.example.com/v1/items/1")
        #expect(transport.requests.count == 3)
        #expect(transport.requests.map(\.url) == Array(repeating: "https://api.example.com/v1/items/1", count: 3))
        #expect(transport.requests.first?.headerFields[.accept] == "application/json")
    }

    @Test func mockTransportResponderSeesEachRequest() async throws {
        let transport = MockTransport { request throws(TransportError) in
            guard request.method == .get else { throw TransportError(.invalidURL, message: "GET only") }
            return TransportResponse(status: .ok, body: Data(request.url.utf8))
        }
        let provider = Provider<Item>(session: transport)
        let response = try await provider.request(Item(baseURL: URL(string: "https://a.example")!))
        #expect(response.data.text == "https://a.example/items/1")
        var post = Item(baseURL: URL(string: "https://a.example")!)
        post.method = .post
        let error = await curlewError { try await provider.request(post) }
        guard case .transport(let failure) = error else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(failure.message == "GET only")
    }

    @Test func mockTransportHonoursCancellation() async throws {
        let transport = MockTransport { request throws(TransportError) in
            try? await Task.sleep(for: .seconds(30))
            return TransportResponse(status: .ok)
        }
        let provider = Provider<Item>(session: transport)
        let call = Task { try await provider.request(Item(baseURL: URL(string: "https://a.example")!)) }
        try await Task.sleep(for: .milliseconds(50))
        call.cancel()
        let error = await curlewError { try await call.value }
        #expect(error?.isCancellation == true)
    }

    @Test func endpointMappingSendsTargetsToTheLocalServerKeepingTheirPaths() async throws {
        let server = try await LocalHTTPServer.start { request in .text("\(request.method) \(request.uri)") }
        let provider = Provider<Item>(endpointClosure: server.endpointMapping())
        var target = Item(baseURL: URL(string: "https://api.example.com/v1?lang=en")!)
        target.task = .requestParameters(parameters: ["page": 2], encoding: URLEncoding.queryString)
        let response = try await provider.request(target)
        #expect(response.data.text == "GET /v1/items/1?lang=en&page=2")
        #expect(response.request?.url == server.url("/v1/items/1?lang=en&page=2"))
        try await server.shutdown()
    }

    @Test func defaultEndpointWithAnotherBaseURL() throws {
        let target = Item(baseURL: URL(string: "https://api.example.com/v1")!)
        let staging = Endpoint.default(for: target, baseURL: URL(string: "https://staging.example.com/v2/")!)
        #expect(staging.url == "https://staging.example.com/v2/items/1")
        #expect(staging.httpHeaderFields == ["Accept": "application/json"])
        #expect(staging.method == .get)
        #expect(Endpoint.default(for: target).url == "https://api.example.com/v1/items/1")
    }
}
