// Curlew — targets resolve into the documented URLs, methods and tasks.

import Curlew
import Foundation
import Testing

@Suite struct TargetTests {
    @Test(arguments: [
        (GitHub.zen, "https://api.github.com/zen"),
        (GitHub.userProfile("ashfurrow"), "https://api.github.com/users/ashfurrow"),
        (GitHub.userRepositories("ashfurrow"), "https://api.github.com/users/ashfurrow/repos?sort=pushed"),
        (GitHub.branches("Moya", true), "https://api.github.com/repos/Moya/branches?protected=true"),
        (GitHub.branches("Moya", false), "https://api.github.com/repos/Moya/branches?protected=false"),
    ])
    func githubTargetBuildsTheDocumentedRequests(target: GitHub, url: String) throws {
        let request = try Endpoint.default(for: target).urlRequest()
        #expect(request.url == url)
        #expect(request.method == .get)
        #expect(request.body == nil)
    }

    @Test func defaultsOfTheProtocol() {
        struct Minimal: TargetType {
            var baseURL: URL { URL(string: "https://example.com")! }
            var path: String { "" }
            var method: HTTPMethod { .get }
            var task: RequestTask { .requestPlain }
            var headers: [String: String]? { nil }
        }
        #expect(Minimal().sampleData.isEmpty)
        #expect(Minimal().validationType == .none)
        #expect(Endpoint.defaultURL(for: Minimal()) == "https://example.com")
    }

    @Test(arguments: [
        ("https://example.com", "/a", "https://example.com/a"),
        ("https://example.com/", "/a", "https://example.com/a"),
        ("https://example.com/v1", "a/b", "https://example.com/v1/a/b"),
        ("https://example.com/v1/", "a", "https://example.com/v1/a"),
    ])
    func baseURLAndPathJoinWithOneSlash(base: String, path: String, expected: String) {
        struct Joined: TargetType {
            let base: String
            let path: String
            var baseURL: URL { URL(string: base)! }
            var method: HTTPMethod { .get }
            var task: RequestTask { .requestPlain }
            var headers: [String: String]? { nil }
        }
        #expect(Endpoint.defaultURL(for: Joined(base: base, path: path)) == expected)
    }

    @Test func validationTypeCodes() {
        #expect(ValidationType.none.statusCodes == [])
        #expect(ValidationType.successCodes.statusCodes == Array(200...299))
        #expect(ValidationType.successAndRedirectCodes.statusCodes == Array(200...399))
        #expect(ValidationType.customCodes([200, 418]).statusCodes == [200, 418])
    }

    @Test func multiTargetForwardsEverything() throws {
        let multi = MultiTarget(GitHub.userRepositories("moya"))
        #expect(multi.baseURL == GitHub.zen.baseURL)
        #expect(multi.path == "/users/moya/repos")
        #expect(multi.method == .get)
        #expect(multi.sampleData == GitHub.userRepositories("moya").sampleData)
        #expect(multi.target is GitHub)
        let request = try Endpoint.default(for: multi).urlRequest()
        #expect(request.url == "https://api.github.com/users/moya/repos?sort=pushed")
    }
}
