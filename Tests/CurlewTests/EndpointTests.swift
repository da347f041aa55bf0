// Curlew — endpoints: adding headers, replacing tasks, building requests and their three errors.

import Curlew
import Foundation
import Testing

@Suite struct EndpointTests {
    func endpoint(url: String = "https://api.example.com/items", task: RequestTask = .requestPlain, headers: [String: String]? = ["A": "1"]) -> Endpoint {
        Endpoint(url: url, sampleResponseClosure: { .networkResponse(200, Data("sample".utf8)) }, method: .post, task: task, httpHeaderFields: headers)
    }

    @Test func addingHeaderFieldsMergesWithNewValuesWinning() throws {
        let added = endpoint().adding(newHTTPHeaderFields: ["A": "2", "B": "3"])
        #expect(added.httpHeaderFields == ["A": "2", "B": "3"])
        let request = try added.urlRequest()
        #expect(request.headerFields.map { "\($0.name): \($0.value)" } == ["A: 2", "B: 3"])
    }

    @Test func replacingTheTask() throws {
        let replaced = endpoint().replacing(task: .requestData(Data("raw".utf8)))
        #expect(try replaced.urlRequest().body?.inMemoryBytes == Data("raw".utf8))
        #expect(replaced.url == endpoint().url)
    }

    @Test func requestTasksBuildBodies() throws {
        struct Payload: Encodable, Sendable { let name: String; let when: Date }
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let json = try endpoint(task: .requestJSONEncodable(Payload(name: "n", when: date))).urlRequest()
        #expect(json.body?.inMemoryBytes?.text == #"{"name":"n","when":721692800}"#)
        #expect(json.headerFields[.contentType] == "application/json")

        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        let custom = try endpoint(task: .requestCustomJSONEncodable(Payload(name: "n", when: date), encoder: encoder)).urlRequest()
        #expect(custom.body?.inMemoryBytes?.text == #"{"name":"n","when":1700000000}"#)

        let composite = try endpoint(task: .requestCompositeData(bodyData: Data("body".utf8), urlParameters: ["page": 2])).urlRequest()
        #expect(composite.url == "https://api.example.com/items?page=2")
        #expect(composite.body?.inMemoryBytes == Data("body".utf8))

        let parameters = try endpoint(
            task: .requestCompositeParameters(bodyParameters: ["name": "x"], bodyEncoding: JSONEncoding.default, urlParameters: ["v": true])
        ).urlRequest()
        #expect(parameters.url == "https://api.example.com/items?v=1")
        #expect(parameters.body?.inMemoryBytes?.text == #"{"name":"x"}"#)
        #expect(parameters.headerFields[.contentType] == "application/json")
    }

    @Test(arguments: ["not a url", "ftp://example.com/file", "/relative", "https://exa mple.com/", "https:///nohost"])
    func unbuildableURLIsARequestMappingError(url: String) {
        #expect {
            _ = try endpoint(url: url).urlRequest()
        } throws: { error in
            guard case .requestMapping(let reported) = error as? CurlewError else { return false }
            return reported == url
        }
    }

    @Test func headerWithCRLFIsARequestMappingError() {
        #expect {
            _ = try endpoint(headers: ["X-Evil": "a\r\nInjected: 1"]).urlRequest()
        } throws: { error in
            guard case .requestMapping(let reason) = error as? CurlewError else { return false }
            return reason.contains("X-Evil")
        }
    }

    @Test func unencodableParametersAreAParameterEncodingError() {
        #expect {
            _ = try endpoint(task: .requestParameters(parameters: ["a": nil], encoding: PropertyListEncoding.xml)).urlRequest()
        } throws: { error in
            guard case .parameterEncoding(let underlying) = error as? CurlewError else { return false }
            return underlying is ParameterEncodingError
        }
    }

    @Test func failingEncodableIsAnEncodableMappingError() {
        struct Refuses: Encodable, Sendable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "refused"))
            }
        }
        #expect {
            _ = try endpoint(task: .requestJSONEncodable(Refuses())).urlRequest()
        } throws: { error in
            guard case .encodableMapping = error as? CurlewError else { return false }
            return true
        }
    }

    @Test func endpointsAreEquatableAndHashableByTheirRequest() {
        let a = endpoint(task: .requestParameters(parameters: ["x": 1], encoding: URLEncoding.queryString))
        let b = endpoint(task: .requestParameters(parameters: ["x": 1], encoding: URLEncoding.queryString))
        let c = endpoint(task: .requestParameters(parameters: ["x": 2], encoding: URLEncoding.queryString))
        #expect(a == b)
        #expect(a != c)
        #expect(Set([a, b, c]).count == 2)
    }

    @Test func sampleResponses() throws {
        guard case .networkResponse(let status, let data) = endpoint().sampleResponseClosure() else {
            Issue.record("expected a network response")
            return
        }
        #expect(status == 200)
        #expect(data.text == "sample")
    }
}
