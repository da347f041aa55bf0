// Curlew — parameter encodings produce exact, stable bytes.

import Curlew
import Foundation
import Testing

@Suite struct EncodingTests {
    static let parameters: [String: JSONValue] = [
        "sort": "pushed", "page": 2, "tags": ["a", "b"], "filter": ["state": "open", "label": "x y"], "draft": false,
        "q": "a b&c=d/é", "ratio": 0.5, "none": nil,
    ]

    func request(_ method: HTTPMethod = .get, url: String = "https://example.com/search") -> TransportRequest {
        TransportRequest(url: url, method: method)
    }

    @Test func urlEncodingDefaultGoesToTheQueryForGET() throws {
        let encoded = try URLEncoding.default.encode(request(), with: Self.parameters)
        #expect(
            encoded.url
                == "https://example.com/search?draft=0&filter%5Blabel%5D=x%20y&filter%5Bstate%5D=open&none=&page=2&q=a%20b%26c%3Dd/%C3%A9&ratio=0.5&sort=pushed&tags%5B%5D=a&tags%5B%5D=b"
        )
        #expect(encoded.body == nil)
        #expect(encoded.headerFields[.contentType] == nil)
    }

    @Test func urlEncodingDefaultGoesToTheBodyForPOST() throws {
        let encoded = try URLEncoding.default.encode(request(.post), with: ["b": 1, "a": "x"])
        #expect(encoded.url == "https://example.com/search")
        #expect(encoded.body?.inMemoryBytes == Data("a=x&b=1".utf8))
        #expect(encoded.headerFields[.contentType] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test(arguments: [HTTPMethod.get, .head, .delete])
    func methodDependentQueryMethods(method: HTTPMethod) throws {
        let encoded = try URLEncoding.default.encode(request(method), with: ["a": 1])
        #expect(encoded.url.hasSuffix("?a=1"))
    }

    @Test func destinationsAreForced() throws {
        #expect(try URLEncoding.queryString.encode(request(.post), with: ["a": 1]).url.hasSuffix("?a=1"))
        let body = try URLEncoding.httpBody.encode(request(.get), with: ["a": 1])
        #expect(body.body?.inMemoryBytes == Data("a=1".utf8))
        #expect(body.url == "https://example.com/search")
    }

    @Test(arguments: [
        (URLEncoding.ArrayEncoding.brackets, "t%5B%5D=1&t%5B%5D=2"),
        (.noBrackets, "t=1&t=2"),
        (.indexInBrackets, "t%5B0%5D=1&t%5B1%5D=2"),
    ])
    func arrayEncodings(encoding: URLEncoding.ArrayEncoding, expected: String) {
        #expect(URLEncoding(arrayEncoding: encoding).query(["t": [1, 2]]) == expected)
    }

    @Test func boolEncodings() {
        #expect(URLEncoding(boolEncoding: .numeric).query(["t": true, "f": false]) == "f=0&t=1")
        #expect(URLEncoding(boolEncoding: .literal).query(["t": true, "f": false]) == "f=false&t=true")
    }

    @Test func queryIsAppendedToAnExistingOneBeforeTheFragment() throws {
        let encoded = try URLEncoding.queryString.encode(request(url: "https://e.com/p?x=1#frag"), with: ["y": 2])
        #expect(encoded.url == "https://e.com/p?x=1&y=2#frag")
    }

    @Test func escapingIsRFC3986() {
        #expect(URLEncoding.escape("AZaz09-._~") == "AZaz09-._~")
        #expect(URLEncoding.escape("?/") == "?/")
        #expect(URLEncoding.escape(" !#$&'()*+,:;=@[]") == "%20%21%23%24%26%27%28%29%2A%2B%2C%3A%3B%3D%40%5B%5D")
        #expect(URLEncoding.escape("ü") == "%C3%BC")
    }

    @Test func jsonEncodingIsSortedAndCompact() throws {
        let encoded = try JSONEncoding.default.encode(request(.post), with: ["b": [1, 2], "a": "x/y", "c": ["z": true, "n": nil]])
        #expect(encoded.body?.inMemoryBytes?.text == #"{"a":"x/y","b":[1,2],"c":{"n":null,"z":true}}"#)
        #expect(encoded.headerFields[.contentType] == "application/json")
    }

    @Test func jsonEncodingPrettyPrinted() throws {
        let encoded = try JSONEncoding.prettyPrinted.encode(request(.post), with: ["a": 1])
        #expect(encoded.body?.inMemoryBytes?.text == "{\n  \"a\" : 1\n}")
    }

    @Test func jsonEncodingKeepsAnExistingContentType() throws {
        var base = request(.post)
        base.headerFields[.contentType] = "application/vnd.api+json"
        let encoded = try JSONEncoding.default.encode(base, with: ["a": 1])
        #expect(encoded.headerFields[.contentType] == "application/vnd.api+json")
    }

    @Test(arguments: [PropertyListEncoding.xml, .binary])
    func propertyListRoundTrips(encoding: PropertyListEncoding) throws {
        let parameters: [String: JSONValue] = ["name": "curlew", "count": 3, "ok": true, "list": ["a", "b"], "nested": ["x": 1.5]]
        let encoded = try encoding.encode(request(.post), with: parameters)
        let data = try #require(encoded.body?.inMemoryBytes)
        let decoded = try PropertyListDecoder().decode([String: JSONValue].self, from: data)
        #expect(decoded == parameters)
        #expect(encoded.headerFields[.contentType] == "application/x-plist")
        let prefix = encoding == .xml ? "<?xml" : "bplist"
        #expect(data.text.hasPrefix(prefix))
    }

    @Test func propertyListRefusesNull() {
        #expect(throws: ParameterEncodingError.unencodable("a property list cannot hold null (at a.b)")) {
            _ = try PropertyListEncoding.xml.encode(TransportRequest(url: "https://e.com", method: .post), with: ["a": ["b": nil]])
        }
    }

    @Test func customEncodingsConform() throws {
        struct HeaderEncoding: ParameterEncoding {
            func encode(_ request: TransportRequest, with parameters: [String: JSONValue]?) throws -> TransportRequest {
                var request = request
                for (key, value) in (parameters ?? [:]).sorted(by: { $0.key < $1.key }) {
                    request.headerFields.append(HTTPField(name: HTTPField.Name("X-\(key)")!, value: value.stringValue ?? ""))
                }
                return request
            }
        }
        let endpoint = Endpoint(
            url: "https://e.com/x", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .get,
            task: .requestParameters(parameters: ["a": "1", "b": "2"], encoding: HeaderEncoding()), httpHeaderFields: nil)
        let request = try endpoint.urlRequest()
        #expect(request.headerFields[HTTPField.Name("X-a")!] == "1")
        #expect(request.headerFields[HTTPField.Name("X-b")!] == "2")
    }
}
