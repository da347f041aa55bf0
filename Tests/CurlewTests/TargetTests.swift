// Curlew — targets resolve into the documented URLs, methods and tasks.

import Curlew
import CurlewTestSupport
import Foundation
import Testing

/// A target whose every property is set, so forwarding can be checked property by property.
private struct Detailed: TargetType {
    var baseURL: URL { URL(string: "https://example.com/v2")! }
    var path: String { "/items" }
    var method: HTTPRequest.Method { .patch }
    var task: RequestTask { .requestData(Data("patch".utf8)) }
    var headers: [String: String]? { ["X-Key": "k"] }
    var sampleData: Data { Data("sample".utf8) }
    var validationType: ValidationType { .customCodes([204]) }
}

/// A target built from a base URL string and a path, for the joining rules.
private struct Joined: TargetType {
    let base: String
    let path: String
    var baseURL: URL { URL(string: base)! }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}

@Suite struct TargetTests {
    @Test(arguments: [
        (GitHub.zen, "https://api.github.com/zen"),
        (GitHub.userProfile("ashfurrow"), "https://api.github.com/users/ashfurrow"),
        (GitHub.userRepositories("ashfurrow"), "https://api.github.com/users/ashfurrow/repos?sort=pushed"),
        (GitHub.branches("x", true), "https://api.github.com/repos/x/branches?protected=true"),
        (GitHub.branches("Moya", false), "https://api.github.com/repos/Moya/branches?protected=false"),
    ])
    func githubTargetBuildsTheDocumentedRequests(target: GitHub, url: String) throws {
        let request = try Endpoint.default(for: target).urlRequest()
        #expect(request.url == url)
        #expect(request.method == .get)
        #expect(request.headerFields.isEmpty)
        #expect(request.body == nil)
    }

    @Test func githubSampleData() {
        #expect(GitHub.zen.sampleData.text == "Half measures are as bad as nothing at all.")
        #expect(GitHub.branches("x", true).sampleData.text == #"[{"name": "master"}]"#)
    }

    @Test func defaultsOfTheProtocol() {
        let minimal = Joined(base: "https://example.com", path: "")
        #expect(minimal.sampleData.isEmpty)
        #expect(minimal.validationType == .none)
    }

    @Test(arguments: [
        ("https://example.com", "", "https://example.com"),
        ("https://example.com/v1/", "", "https://example.com/v1/"),
        ("https://example.com", "/a", "https://example.com/a"),
        ("https://example.com/", "/a", "https://example.com/a"),
        ("https://example.com/v1", "a/b", "https://example.com/v1/a/b"),
        ("https://example.com/v1/", "a", "https://example.com/v1/a"),
        ("https://example.com/v1", "/a/", "https://example.com/v1/a/"),
    ])
    func baseURLAndPathJoinWithOneSlash(base: String, path: String, expected: String) {
        #expect(Endpoint.defaultURL(for: Joined(base: base, path: path)) == expected)
    }

    @Test(arguments: [
        ("/users/a b", "https://e.com/users/a%20b"),
        ("/search?q=1", "https://e.com/search%3Fq=1"),
        ("/notes#top", "https://e.com/notes%23top"),
        ("/users/é", "https://e.com/users/%C3%A9"),
        ("/users/a%20b", "https://e.com/users/a%20b"),
        ("/100%", "https://e.com/100%25"),
        ("/a:b@c;d=e,f+g!h$i&j'k(l)m*n~o", "https://e.com/a:b@c;d=e,f+g!h$i&j'k(l)m*n~o"),
    ])
    func pathCharactersAreEscapedLikeAPathComponent(path: String, expected: String) {
        #expect(Endpoint.defaultURL(for: Joined(base: "https://e.com", path: path)) == expected)
    }

    @Test func aQueryOnTheBaseURLStaysAfterThePath() throws {
        let target = Joined(base: "https://e.com/api?key=1", path: "/zen")
        #expect(Endpoint.defaultURL(for: target) == "https://e.com/api/zen?key=1")
        let withFragment = Joined(base: "https://e.com/api/#top", path: "zen")
        #expect(Endpoint.defaultURL(for: withFragment) == "https://e.com/api/zen#top")
    }

    /// Joined URLs are kept for the next request (issue 32): a target whose base URL or path changes
    /// between calls still gets its own URL every time, with more pairs than are kept.
    @Test func joinedURLsFollowChangingBaseURLsAndPaths() throws {
        for _ in 0..<3 {
            for index in 0..<20 {
                let base = index.isMultiple(of: 2) ? "https://a.example.com" : "https://b.example.com/v1/"
                let target = Joined(base: base, path: "items/\(index)")
                let expected = index.isMultiple(of: 2) ? "\(base)/items/\(index)" : "\(base)items/\(index)"
                #expect(Endpoint.defaultURL(for: target) == expected)
                #expect(try Endpoint.default(for: target).urlRequest().url == expected)
            }
        }
    }

    /// A joined URL that cannot be sent is refused every time, however often it is joined, and a sendable
    /// URL checked before does not make it pass.
    @Test func unsendableJoinedURLsAreRefusedEveryTime() throws {
        let good = Joined(base: "https://example.com", path: "/file")
        let bad = Joined(base: "ftp://example.com", path: "/file")
        for _ in 0..<3 {
            #expect(try Endpoint.default(for: good).urlRequest().url == "https://example.com/file")
            #expect(throws: CurlewError.self) { try Endpoint.default(for: bad).urlRequest() }
            let custom = Endpoint.default(for: good).adding(newHTTPHeaderFields: ["X-A": "1"])
            #expect(try custom.urlRequest().url == "https://example.com/file")
            let unsendable = Endpoint(
                url: "https://example.com/a b", sampleResponseClosure: { .networkResponse(200, Data()) },
                method: .get, task: .requestPlain, httpHeaderFields: nil)
            #expect(throws: CurlewError.self) { try unsendable.urlRequest() }
        }
    }

    @Test func validationTypeCodes() {
        #expect(ValidationType.none.statusCodes == [])
        #expect(ValidationType.successCodes.statusCodes == Array(200...299))
        #expect(ValidationType.successAndRedirectCodes.statusCodes == Array(200...399))
        #expect(ValidationType.customCodes([200, 418]).statusCodes == [200, 418])
    }

    @Test func multiTargetForwardsEveryProperty() throws {
        let multi = MultiTarget(Detailed())
        #expect(multi.baseURL == URL(string: "https://example.com/v2")!)
        #expect(multi.path == "/items")
        #expect(multi.method == .patch)
        #expect(multi.headers == ["X-Key": "k"])
        #expect(multi.sampleData.text == "sample")
        #expect(multi.validationType == .customCodes([204]))
        guard case .requestData(let data) = multi.task else {
            Issue.record("expected the wrapped task")
            return
        }
        #expect(data.text == "patch")
        #expect(multi.target is Detailed)
        #expect(try Endpoint.default(for: multi).urlRequest() == Endpoint.default(for: Detailed()).urlRequest())
    }

    @Test func multiTargetMixesTargetTypes() throws {
        let targets = [MultiTarget(GitHub.userRepositories("moya")), MultiTarget(Detailed())]
        let urls = try targets.map { try Endpoint.default(for: $0).urlRequest().url }
        #expect(urls == ["https://api.github.com/users/moya/repos?sort=pushed", "https://example.com/v2/items"])
        #expect(targets.map { $0.target is GitHub } == [true, false])
    }
}
