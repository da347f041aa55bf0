// Curlew — endpoints: adding headers, replacing tasks, building requests and their three errors.

import Curlew
import CurlewTestSupport
import Foundation
import Testing

@Suite struct EndpointTests {
    func endpoint(
        url: String = "https://api.example.com/items", method: HTTPRequest.Method = .post, task: RequestTask = .requestPlain,
        headers: [String: String]? = ["A": "1"]
    ) -> Endpoint {
        Endpoint(
            url: url, sampleResponseClosure: { .networkResponse(200, Data("sample".utf8)) }, method: method,
            task: task, httpHeaderFields: headers)
    }

    /// Builds the request, expecting a ``CurlewError``, and returns it.
    func buildError(_ endpoint: Endpoint, sourceLocation: SourceLocation = #_sourceLocation) -> CurlewError? {
        #expect(throws: CurlewError.self, sourceLocation: sourceLocation) { try endpoint.urlRequest() }
    }

    // MARK: Modifiers

    @Test func addingHeaderFieldsMergesWithNewValuesWinning() throws {
        let added = endpoint().adding(newHTTPHeaderFields: ["A": "2", "B": "3"])
        #expect(added.httpHeaderFields == ["A": "2", "B": "3"])
        #expect(endpoint(headers: nil).adding(newHTTPHeaderFields: ["C": "4"]).httpHeaderFields == ["C": "4"])
        #expect(added.url == endpoint().url)
        #expect(added.method == .post)
    }

    @Test func headerFieldsGoOnInSortedOrder() throws {
        let request = try endpoint(headers: ["b-second": "2", "A-First": "1", "c-third": "3"]).urlRequest()
        #expect(request.headerFields.map(\.description) == ["A-First: 1", "b-second: 2", "c-third: 3"])
    }

    @Test func replacingTheTask() throws {
        let original = endpoint(task: .requestParameters(parameters: ["a": 1], encoding: URLEncoding.queryString))
        let replaced = original.replacing(task: .requestData(Data("raw".utf8)))
        let request = try replaced.urlRequest()
        #expect(request.body?.inMemoryBytes == Data("raw".utf8))
        #expect(request.url == "https://api.example.com/items")
        #expect(replaced.httpHeaderFields == original.httpHeaderFields)
        #expect(try original.urlRequest().url == "https://api.example.com/items?a=1")
    }

    // MARK: Tasks

    @Test func plainAndDataTasks() throws {
        let plain = try endpoint(method: .get, headers: nil).urlRequest()
        #expect(plain == TransportRequest(url: "https://api.example.com/items", method: .get))
        let data = try endpoint(task: .requestData(Data([0, 1, 2])), headers: nil).urlRequest()
        #expect(data.body?.inMemoryBytes == Data([0, 1, 2]))
        #expect(data.headerFields[.contentType] == nil)
    }

    struct Payload: Encodable, Sendable {
        let name: String
        let when: Date
        let tags: [String: Int]
    }

    static let payload = Payload(name: "n", when: Date(timeIntervalSince1970: 1_700_000_000), tags: ["z": 1, "a": 2])

    @Test func jsonEncodableTask() throws {
        let request = try endpoint(task: .requestJSONEncodable(Self.payload)).urlRequest()
        // Default strategies: dates as seconds since 2001-01-01; keys sorted for stable bytes.
        #expect(request.body?.inMemoryBytes?.text == #"{"name":"n","tags":{"a":2,"z":1},"when":721692800}"#)
        #expect(request.headerFields[.contentType] == "application/json")

        let typed = try endpoint(
            task: .requestJSONEncodable(Self.payload), headers: ["Content-Type": "application/vnd.api+json"]
        ).urlRequest()
        #expect(typed.headerFields[.contentType] == "application/vnd.api+json")
        #expect(typed.headerFields.count == 1)
    }

    @Test func customJSONEncodableTask() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = .sortedKeys
        let request = try endpoint(task: .requestCustomJSONEncodable(Self.payload, encoder: encoder)).urlRequest()
        #expect(request.body?.inMemoryBytes?.text == #"{"name":"n","tags":{"a":2,"z":1},"when":1700000000}"#)
        #expect(request.headerFields[.contentType] == "application/json")
    }

    @Test func parametersTask() throws {
        let request = try endpoint(
            method: .get, task: .requestParameters(parameters: ["q": "a b", "page": 2], encoding: URLEncoding.default)
        ).urlRequest()
        #expect(request.url == "https://api.example.com/items?page=2&q=a%20b")
        #expect(request.body == nil)
    }

    @Test func compositeDataTask() throws {
        let request = try endpoint(
            url: "https://api.example.com/items?v=1",
            task: .requestCompositeData(bodyData: Data("body".utf8), urlParameters: ["page": 2, "all": true])
        ).urlRequest()
        #expect(request.url == "https://api.example.com/items?v=1&all=1&page=2")
        #expect(request.body?.inMemoryBytes?.text == "body")
        #expect(request.headerFields[.contentType] == nil)
    }

    @Test func compositeParametersTaskWithJSONBody() throws {
        let request = try endpoint(
            task: .requestCompositeParameters(
                bodyParameters: ["name": "x", "n": 1], bodyEncoding: JSONEncoding.default, urlParameters: ["v": true])
        ).urlRequest()
        #expect(request.url == "https://api.example.com/items?v=1")
        #expect(request.body?.inMemoryBytes?.text == #"{"n":1,"name":"x"}"#)
        #expect(request.headerFields[.contentType] == "application/json")
    }

    @Test func compositeParametersTaskWithFormBody() throws {
        let request = try endpoint(
            method: .get,
            task: .requestCompositeParameters(
                bodyParameters: ["name": "x y"], bodyEncoding: URLEncoding.httpBody, urlParameters: ["v": 2])
        ).urlRequest()
        #expect(request.url == "https://api.example.com/items?v=2")
        #expect(request.body?.inMemoryBytes?.text == "name=x%20y")
        #expect(request.headerFields[.contentType] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test(arguments: [URLEncoding.default, .queryString])
    func compositeParametersRefuseABodyEncodingThatWritesTheURL(encoding: URLEncoding) {
        let error = buildError(
            endpoint(
                task: .requestCompositeParameters(bodyParameters: ["a": 1], bodyEncoding: encoding, urlParameters: [:]))
        )
        guard case .parameterEncoding(let underlying) = error else {
            Issue.record("expected parameterEncoding, got \(String(describing: error))")
            return
        }
        #expect(underlying is ParameterEncodingError)
    }

    // MARK: The three errors

    @Test(arguments: [
        "not a url", "ftp://example.com/file", "/relative", "https://exa mple.com/", "https://example.com/a b",
        "https:///nohost", "https://", "https://example.com/\tx", "https://example.com/\u{7F}",
    ])
    func unbuildableURLIsARequestMappingErrorCarryingTheURL(url: String) {
        let error = buildError(endpoint(url: url))
        guard case .requestMapping(let reported) = error else {
            Issue.record("expected requestMapping, got \(String(describing: error))")
            return
        }
        #expect(reported == url)
    }

    @Test(arguments: ["HTTPS://example.com/x", "http://127.0.0.1:8080/", "https://[::1]/x?q=%20#f"])
    func absoluteHTTPURLsAreAccepted(url: String) throws {
        #expect(try endpoint(url: url).urlRequest().url == url)
    }

    @Test(arguments: [
        ["X-Evil": "a\r\nb"], ["X-Evil": "a\nInjected: 1"], ["X-Nul": "a\u{0}b"], ["Bad Name": "v"], ["": "v"],
    ])
    func unsendableHeaderIsARequestMappingError(headers: [String: String]) {
        let error = buildError(endpoint(headers: headers))
        guard case .requestMapping(let reason) = error else {
            Issue.record("expected requestMapping, got \(String(describing: error))")
            return
        }
        #expect(!reason.isEmpty)
    }

    @Test func headerReasonNamesTheHeader() {
        let error = buildError(endpoint(headers: ["X-Evil": "a\r\nb"]))
        guard case .requestMapping(let reason) = error else {
            Issue.record("expected requestMapping, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("X-Evil"))
    }

    @Test func unencodableParametersAreAParameterEncodingError() {
        let error = buildError(
            endpoint(task: .requestParameters(parameters: ["a": nil], encoding: PropertyListEncoding.xml)))
        guard case .parameterEncoding(let underlying) = error else {
            Issue.record("expected parameterEncoding, got \(String(describing: error))")
            return
        }
        #expect(underlying as? ParameterEncodingError == .unencodable("a property list cannot hold null (at a)"))
    }

    @Test func customEncodingErrorsAreWrappedAsTheyAre() {
        struct Refusal: Error, Equatable {}
        struct Refusing: ParameterEncoding {
            func encode(_ request: TransportRequest, with parameters: [String: JSONValue]?) throws -> TransportRequest {
                throw Refusal()
            }
        }
        let error = buildError(endpoint(task: .requestParameters(parameters: [:], encoding: Refusing())))
        guard case .parameterEncoding(let underlying) = error else {
            Issue.record("expected parameterEncoding, got \(String(describing: error))")
            return
        }
        #expect(underlying is Refusal)
    }

    @Test func failingEncodableIsAnEncodableMappingError() {
        struct Refuses: Encodable, Sendable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "refused"))
            }
        }
        for task in [
            RequestTask.requestJSONEncodable(Refuses()), .requestCustomJSONEncodable(Refuses(), encoder: JSONEncoder()),
        ] {
            let error = buildError(endpoint(task: task))
            guard case .encodableMapping(let underlying) = error else {
                Issue.record("expected encodableMapping, got \(String(describing: error))")
                continue
            }
            #expect(underlying is EncodingError)
        }
    }

    // MARK: Equality

    @Test func endpointsAreEquatableAndHashableByTheirRequest() {
        let query = { (value: JSONValue) in
            RequestTask.requestParameters(parameters: ["x": value], encoding: URLEncoding.queryString)
        }
        let a = endpoint(task: query(1))
        let b = Endpoint(
            url: a.url, sampleResponseClosure: { .networkError(CancellationError()) }, method: .post, task: query(1),
            httpHeaderFields: ["A": "1"])
        let sameURLByOtherMeans = endpoint(url: "https://api.example.com/items?x=1", task: .requestPlain)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a == sameURLByOtherMeans)
        #expect(a != endpoint(task: query(2)))
        #expect(a != endpoint(method: .put, task: query(1)))
        #expect(a != endpoint(task: query(1), headers: ["A": "2"]))
        #expect(a != endpoint(task: .requestCompositeData(bodyData: Data("b".utf8), urlParameters: ["x": 1])))
        #expect(Set([a, b, sameURLByOtherMeans, endpoint(task: query(2))]).count == 2)
    }

    @Test func endpointsThatCannotBuildCompareByURLMethodAndHeaders() {
        let broken = endpoint(url: "not a url")
        #expect(broken == endpoint(url: "not a url"))
        #expect(broken.hashValue == endpoint(url: "not a url").hashValue)
        #expect(broken != endpoint(url: "not a url", headers: nil))
        let unencodable = endpoint(task: .requestParameters(parameters: ["a": nil], encoding: PropertyListEncoding.xml))
        #expect(unencodable != endpoint())
    }

    // MARK: Sample responses

    @Test func sampleResponses() {
        guard case .networkResponse(let status, let data) = endpoint().sampleResponseClosure() else {
            Issue.record("expected a network response")
            return
        }
        #expect(status == 200)
        #expect(data.text == "sample")

        let full = EndpointSampleResponse.response(status: 201, headers: ["Location": "/items/1"], data: Data())
        guard case .response(let code, let headers, let body) = full else { return }
        #expect(code == 201)
        #expect(headers == ["Location": "/items/1"])
        #expect(body.isEmpty)
    }

    @Test func defaultEndpointOfATarget() throws {
        let endpoint = Endpoint.default(for: GitHub.userProfile("ashfurrow"))
        #expect(endpoint.url == "https://api.github.com/users/ashfurrow")
        #expect(endpoint.method == .get)
        #expect(endpoint.httpHeaderFields == nil)
        guard case .networkResponse(let status, let data) = endpoint.sampleResponseClosure() else {
            Issue.record("expected a network response")
            return
        }
        #expect(status == 200)
        #expect(data.text == #"{"login": "ashfurrow", "id": 100}"#)
    }
}
