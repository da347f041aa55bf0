// Curlew — parameter encodings produce exact, stable bytes.

import Curlew
import CurlewTestSupport
import Foundation
import Testing

@Suite struct EncodingTests {
    /// The parameters every URL-encoding row encodes: nesting, an array, a Boolean and escaping.
    static let parameters: [String: JSONValue] = [
        "sort": "pushed", "page": 2, "tags": ["a", "b"], "filter": ["state": "open"], "draft": false,
        "q": "a b&c=d/é",
    ]

    /// Array style, Boolean style, and the exact query they give for ``parameters``.
    static let queries: [(URLEncoding.ArrayEncoding, URLEncoding.BoolEncoding, String)] = [
        (
            .brackets, .numeric,
            "draft=0&filter%5Bstate%5D=open&page=2&q=a%20b%26c%3Dd%2F%C3%A9&sort=pushed&tags%5B%5D=a&tags%5B%5D=b"
        ),
        (
            .brackets, .literal,
            "draft=false&filter%5Bstate%5D=open&page=2&q=a%20b%26c%3Dd%2F%C3%A9&sort=pushed&tags%5B%5D=a&tags%5B%5D=b"
        ),
        (
            .noBrackets, .numeric,
            "draft=0&filter%5Bstate%5D=open&page=2&q=a%20b%26c%3Dd%2F%C3%A9&sort=pushed&tags=a&tags=b"
        ),
        (
            .noBrackets, .literal,
            "draft=false&filter%5Bstate%5D=open&page=2&q=a%20b%26c%3Dd%2F%C3%A9&sort=pushed&tags=a&tags=b"
        ),
        (
            .indexInBrackets, .numeric,
            "draft=0&filter%5Bstate%5D=open&page=2&q=a%20b%26c%3Dd%2F%C3%A9&sort=pushed&tags%5B0%5D=a&tags%5B1%5D=b"
        ),
        (
            .indexInBrackets, .literal,
            "draft=false&filter%5Bstate%5D=open&page=2&q=a%20b%26c%3Dd%2F%C3%A9&sort=pushed&tags%5B0%5D=a&tags%5B1%5D=b"
        ),
    ]

    static let formType = "application/x-www-form-urlencoded; charset=utf-8"

    func request(_ method: HTTPRequest.Method = .get, url: String = "https://example.com/search") -> TransportRequest {
        TransportRequest(url: url, method: method)
    }

    // MARK: URLEncoding

    @Test(arguments: queries)
    func urlEncodingIntoTheQueryString(
        arrays: URLEncoding.ArrayEncoding, bools: URLEncoding.BoolEncoding, expected: String
    ) throws {
        let encoding = URLEncoding(destination: .queryString, arrayEncoding: arrays, boolEncoding: bools)
        #expect(encoding.query(Self.parameters) == expected)
        let encoded = try encoding.encode(request(.post), with: Self.parameters)
        #expect(encoded.url == "https://example.com/search?" + expected)
        #expect(encoded.body == nil)
        #expect(encoded.headerFields[.contentType] == nil)
    }

    @Test(arguments: queries)
    func urlEncodingIntoTheBody(
        arrays: URLEncoding.ArrayEncoding, bools: URLEncoding.BoolEncoding, expected: String
    ) throws {
        let encoding = URLEncoding(destination: .httpBody, arrayEncoding: arrays, boolEncoding: bools)
        let encoded = try encoding.encode(request(.get), with: Self.parameters)
        #expect(encoded.url == "https://example.com/search")
        #expect(encoded.body?.inMemoryBytes?.text == expected)
        #expect(encoded.headerFields[.contentType] == Self.formType)
    }

    @Test(arguments: [
        (HTTPRequest.Method.get, true), (.head, true), (.delete, true), (.post, false), (.put, false), (.patch, false),
    ])
    func methodDependentDestination(method: HTTPRequest.Method, inQuery: Bool) throws {
        let encoded = try URLEncoding.default.encode(request(method), with: Self.parameters)
        let expected = Self.queries[0].2
        if inQuery {
            #expect(encoded.url == "https://example.com/search?" + expected)
            #expect(encoded.body == nil)
        } else {
            #expect(encoded.url == "https://example.com/search")
            #expect(encoded.body?.inMemoryBytes?.text == expected)
            #expect(encoded.headerFields[.contentType] == Self.formType)
        }
    }

    @Test func staticsAreTheDocumentedConfigurations() {
        #expect(
            URLEncoding.default
                == URLEncoding(destination: .methodDependent, arrayEncoding: .brackets, boolEncoding: .numeric))
        #expect(URLEncoding.queryString.destination == .queryString)
        #expect(URLEncoding.httpBody.destination == .httpBody)
    }

    @Test(arguments: [
        ("https://e.com/p?x=1", "https://e.com/p?x=1&y=2"),
        ("https://e.com/p?x=1#frag", "https://e.com/p?x=1&y=2#frag"),
        ("https://e.com/p?", "https://e.com/p?y=2"),
        ("https://e.com/p?x=1&", "https://e.com/p?x=1&y=2"),
        ("https://e.com/p#frag", "https://e.com/p?y=2#frag"),
    ])
    func queryIsAppendedToAnExistingOne(url: String, expected: String) throws {
        #expect(try URLEncoding.queryString.encode(request(url: url), with: ["y": 2]).url == expected)
    }

    @Test func formBodyKeepsAnExistingContentType() throws {
        var base = request(.post)
        base.headerFields[.contentType] = "application/x-www-form-urlencoded"
        let encoded = try URLEncoding.httpBody.encode(base, with: ["a": 1])
        #expect(encoded.headerFields[.contentType] == "application/x-www-form-urlencoded")
    }

    @Test func nilOrEmptyParametersLeaveTheRequestAlone() throws {
        #expect(try URLEncoding.default.encode(request(.post), with: nil) == request(.post))
        #expect(try URLEncoding.default.encode(request(.post), with: [:]) == request(.post))
        #expect(try URLEncoding.queryString.encode(request(), with: [:]).url == "https://example.com/search")
    }

    @Test func otherValueKinds() {
        let query = URLEncoding.default.query([
            "none": nil, "ratio": 0.5, "neg": -3, "list": [["id": 1], ["id": 2]], "deep": ["a": ["b": "c"]],
        ])
        #expect(query == "deep%5Ba%5D%5Bb%5D=c&list%5B%5D%5Bid%5D=1&list%5B%5D%5Bid%5D=2&neg=-3&none=&ratio=0.5")
    }

    @Test func escapingKeepsOnlyUnreservedCharacters() {
        #expect(URLEncoding.escape("AZaz09-._~") == "AZaz09-._~")
        #expect(URLEncoding.escape("?/") == "%3F%2F")
        #expect(URLEncoding.escape(" !#$%&'()*+,:;=@[]") == "%20%21%23%24%25%26%27%28%29%2A%2B%2C%3A%3B%3D%40%5B%5D")
        #expect(URLEncoding.escape("ü🐦") == "%C3%BC%F0%9F%90%A6")
    }

    // MARK: JSONEncoding

    @Test func jsonBodyIsSortedCompactAndExact() throws {
        let encoded = try JSONEncoding.default.encode(request(.post), with: Self.parameters)
        #expect(
            encoded.body?.inMemoryBytes?.text
                == #"{"draft":false,"filter":{"state":"open"},"page":2,"q":"a b&c=d/é","sort":"pushed","tags":["a","b"]}"#
        )
        #expect(encoded.headerFields[.contentType] == "application/json")
        #expect(encoded.url == "https://example.com/search")
    }

    @Test func jsonBodyPrettyPrinted() throws {
        let encoded = try JSONEncoding.prettyPrinted.encode(request(.post), with: ["b": nil, "a": [1]])
        #expect(encoded.body?.inMemoryBytes?.text == "{\n  \"a\" : [\n    1\n  ],\n  \"b\" : null\n}")
    }

    @Test func jsonKeepsAnExistingContentTypeAndIgnoresNil() throws {
        var base = request(.post)
        base.headerFields[.contentType] = "application/vnd.api+json"
        #expect(
            try JSONEncoding.default.encode(base, with: ["a": 1]).headerFields[.contentType]
                == "application/vnd.api+json")
        #expect(try JSONEncoding.default.encode(base, with: nil) == base)
        #expect(try JSONEncoding.default.encode(request(.post), with: [:]).body?.inMemoryBytes?.text == "{}")
    }

    @Test func jsonRefusesNonFiniteNumbers() {
        let error = #expect(throws: ParameterEncodingError.self) {
            try JSONEncoding.default.encode(request(.post), with: ["x": .double(.nan)])
        }
        guard case .unencodable = error else {
            Issue.record("expected unencodable, got \(String(describing: error))")
            return
        }
    }

    // MARK: PropertyListEncoding

    @Test(arguments: [PropertyListEncoding.xml, .binary])
    func propertyListRoundTrips(encoding: PropertyListEncoding) throws {
        let parameters: [String: JSONValue] = [
            "name": "curlew", "count": 3, "list": ["a", "b"], "nested": ["x": 1.5, "s": "é"],
        ]
        let encoded = try encoding.encode(request(.post), with: parameters)
        let data = try #require(encoded.body?.inMemoryBytes)
        #expect(try PropertyListDecoder().decode([String: JSONValue].self, from: data) == parameters)
        #expect(encoded.headerFields[.contentType] == "application/x-plist")
        #expect(data.text.hasPrefix(encoding == .xml ? "<?xml" : "bplist00"))
    }

    @Test func propertyListBooleansRoundTrip() throws {
        struct Flags: Decodable, Equatable {
            let on: Bool
            let off: Bool
        }
        let encoded = try PropertyListEncoding.binary.encode(request(.post), with: ["on": true, "off": false])
        let data = try #require(encoded.body?.inMemoryBytes)
        #expect(try PropertyListDecoder().decode(Flags.self, from: data) == Flags(on: true, off: false))
    }

    @Test func propertyListRefusesNullWithItsPath() {
        #expect(throws: ParameterEncodingError.unencodable("a property list cannot hold null (at a.list.1)")) {
            try PropertyListEncoding.xml.encode(request(.post), with: ["a": ["list": [1, nil]], "b": nil])
        }
    }

    // MARK: Custom encodings

    @Test func customEncodingsConform() throws {
        /// Puts each parameter in an `X-<name>` header field.
        struct HeaderEncoding: ParameterEncoding {
            func encode(_ request: TransportRequest, with parameters: [String: JSONValue]?) throws -> TransportRequest {
                var request = request
                for (key, value) in (parameters ?? [:]).sorted(by: { $0.key < $1.key }) {
                    let name = try #require(HTTPField.Name("X-\(key)"))
                    request.headerFields.append(HTTPField(name: name, value: value.stringValue ?? "\(value)"))
                }
                return request
            }
        }
        let endpoint = Endpoint(
            url: "https://e.com/x", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .get,
            task: .requestParameters(parameters: ["b": "2", "a": "1"], encoding: HeaderEncoding()),
            httpHeaderFields: nil)
        let request = try endpoint.urlRequest()
        #expect(request.headerFields.map(\.description) == ["X-a: 1", "X-b: 2"])
        #expect(request.url == "https://e.com/x")
        #expect(request.body == nil)
    }
}
