// Curlew — the redirect rules as tables, without sockets: status × method, the refusals and their
// order, loops, and which fields follow a hop. RedirectTests proves the same rules wired to real servers.

@testable import CurlewEngine
import Foundation
import HTTPTypes
import Testing

/// What ``RedirectRules/decide(request:origin:status:hasLocation:target:policy:hopsSoFar:visited:detectsLoops:)``
/// decided, in comparable form: the next request as method, URL, fields (`Name: value`, in order) and body.
private enum Outcome: Equatable, CustomStringConvertible {
    case returnResponse
    case follow(method: String, url: String, fields: [String], body: String?, leavesOrigin: Bool)
    case fail(TransportError.Code, String)

    init(_ decision: RedirectRules.Decision) {
        switch decision {
        case .returnResponse:
            self = .returnResponse
        case .follow(let next, let leavesOrigin):
            // Bytes as text; a file or a stream as its description.
            let body = next.body.map { body in body.inMemoryBytes.map { String(decoding: $0, as: UTF8.self) } ?? "\(body)" }
            self = .follow(
                method: next.method.rawValue, url: next.url, fields: next.headerFields.map { "\($0.name): \($0.value)" },
                body: body, leavesOrigin: leavesOrigin)
        case .fail(let code, let message):
            self = .fail(code, message)
        }
    }

    var description: String {
        switch self {
        case .returnResponse: "returnResponse"
        case .follow(let method, let url, let fields, let body, let leavesOrigin):
            "follow \(method) \(url) leavesOrigin=\(leavesOrigin) body=\(body ?? "nil") fields=\(fields)"
        case .fail(let code, let message): "fail \(code): \(message)"
        }
    }
}

/// The request every table starts from: https://a.example/from with a body and these fields.
private let origin = PoolKey(scheme: "https", host: "a.example", port: 443)
private let requestURL = "https://a.example/from"
private let sameOriginURL = "https://a.example/to"
private let body = "name=curlew"

/// Content negotiation (kept on every hop), credentials and a custom field (kept within the origin),
/// then every body field (dropped with the body).
private let negotiationFields = [
    "Accept: application/json", "Accept-Language: en", "Accept-Encoding: gzip", "User-Agent: curlew-test",
]
private let privateFields = ["Authorization: Bearer secret", "Cookie: session=1", "X-Trace: 42"]
private let formType = "Content-Type: application/x-www-form-urlencoded"
private let bodyFields = [
    formType, "Content-Length: 11", "Content-Encoding: identity",
    "Content-Language: en", "Content-Location: /form", "Expect: 100-continue", "Transfer-Encoding: chunked",
]
private let allFields = negotiationFields + privateFields + bodyFields

private func makeRequest(_ method: HTTPRequest.Method = .post, fields: [String] = allFields) -> TransportRequest {
    var headerFields = HTTPFields()
    for field in fields {
        let parts = field.split(separator: ":", maxSplits: 1).map(String.init)
        if let name = HTTPField.Name(parts[0]) {
            headerFields.append(HTTPField(name: name, value: String(parts[1].dropFirst())))
        }
    }
    return TransportRequest(url: requestURL, method: method, headerFields: headerFields, body: .string(body))
}

/// The key of `url` (scheme, host, port as given; default ports filled in).
private func key(_ url: String) -> PoolKey {
    let components = URLComponents(string: url)
    let scheme = components?.scheme ?? ""
    return PoolKey(
        scheme: scheme, host: components?.host ?? "", port: components?.port ?? (scheme == "http" ? 80 : 443))
}

/// Decides with the defaults of a first hop: the default policy, no hops yet, nothing visited.
private func decide(
    _ request: TransportRequest = makeRequest(), status: Int = 302, hasLocation: Bool = true,
    to url: String? = sameOriginURL, policy: RedirectPolicy = .default, hopsSoFar: Int = 0,
    visited: Set<String> = [], detectsLoops: Bool = true
) -> Outcome {
    Outcome(
        RedirectRules.decide(
            request: request, origin: origin, status: status, hasLocation: hasLocation,
            target: url.map { (url: $0, key: key($0)) }, policy: policy, hopsSoFar: hopsSoFar, visited: visited,
            detectsLoops: detectsLoops))
}

private let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete]

@Suite struct RedirectRulesTests {
    // MARK: Status × method

    /// Every followed status with every method, within the origin: the next method, and whether the
    /// body and its fields go with it.
    @Test(arguments: [
        (301, "GET", "GET", true), (301, "HEAD", "HEAD", true), (301, "POST", "GET", false),
        (301, "PUT", "PUT", true), (301, "PATCH", "PATCH", true), (301, "DELETE", "DELETE", true),
        (302, "GET", "GET", true), (302, "HEAD", "HEAD", true), (302, "POST", "GET", false),
        (302, "PUT", "PUT", true), (302, "PATCH", "PATCH", true), (302, "DELETE", "DELETE", true),
        (303, "GET", "GET", false), (303, "HEAD", "HEAD", true), (303, "POST", "GET", false),
        (303, "PUT", "GET", false), (303, "PATCH", "GET", false), (303, "DELETE", "GET", false),
        (307, "GET", "GET", true), (307, "HEAD", "HEAD", true), (307, "POST", "POST", true),
        (307, "PUT", "PUT", true), (307, "PATCH", "PATCH", true), (307, "DELETE", "DELETE", true),
        (308, "GET", "GET", true), (308, "HEAD", "HEAD", true), (308, "POST", "POST", true),
        (308, "PUT", "PUT", true), (308, "PATCH", "PATCH", true), (308, "DELETE", "DELETE", true),
    ])
    func followedStatusesRewriteMethodsAndBodies(status: Int, methodName: String, nextMethod: String, keepsBody: Bool) throws {
        let method = try #require(HTTPRequest.Method(methodName))
        #expect(
            decide(makeRequest(method), status: status)
                == .follow(
                    method: nextMethod, url: sameOriginURL,
                    fields: keepsBody ? allFields : negotiationFields + privateFields, body: keepsBody ? body : nil,
                    leavesOrigin: false))
    }

    @Test(arguments: [300, 304, 305, 306, 399, 200, 404], methods)
    func otherStatusesAreTheAnswer(status: Int, method: HTTPRequest.Method) {
        #expect(decide(makeRequest(method), status: status) == .returnResponse)
    }

    // MARK: Location and policy

    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectWithoutLocationIsTheAnswer(status: Int) {
        #expect(decide(status: status, hasLocation: false) == .returnResponse)
        #expect(decide(status: status, hasLocation: false, to: nil) == .returnResponse)
    }

    @Test(arguments: [301, 302, 303, 307, 308], [RedirectPolicy.default, .doNotFollow, .follow(maxRedirects: 0)])
    func anUnparsableLocationIsRefusedWhateverThePolicy(status: Int, policy: RedirectPolicy) {
        #expect(decide(status: status, to: nil, policy: policy) == .fail(.redirectRefused, "the redirect's Location cannot be parsed"))
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func doNotFollowReturnsTheRedirect(status: Int) {
        #expect(decide(status: status, policy: .doNotFollow) == .returnResponse)
        // Before any other rule: a scheme it would refuse, or no hops left, is still just the answer.
        #expect(decide(status: status, to: "ftp://a.example/file", policy: .doNotFollow) == .returnResponse)
        #expect(decide(status: status, to: "http://a.example/", policy: .doNotFollow) == .returnResponse)
    }

    /// The rules treat a custom policy as following (the session then asks its closure).
    @Test func aCustomPolicyFollowsLikeTheDefault() {
        let custom = RedirectPolicy.custom { _ in .refuse }
        #expect(decide(status: 307, policy: custom) == decide(status: 307, policy: .default))
        #expect(decide(status: 307, policy: custom, hopsSoFar: 10) == .fail(.tooManyRedirects, "more than 10 redirects"))
    }

    @Test(arguments: ["ftp", "file", "ws", "wss", "gopher", "data", "javascript"])
    func schemesOtherThanHTTPAreRefused(scheme: String) {
        #expect(
            decide(to: "\(scheme)://a.example/x") == .fail(.redirectRefused, "a redirect to the \(scheme) scheme is refused"))
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func httpsToHTTPIsRefusedUnlessAllowed(status: Int) {
        #expect(
            decide(status: status, to: "http://a.example/to") == .fail(.redirectRefused, "a redirect from https to http is refused"))
        guard case .follow(_, let url, _, _, let leavesOrigin) = decide(
            status: status, to: "http://a.example/to", policy: .follow(allowsHTTPSToHTTP: true))
        else {
            Issue.record("an allowed https→http hop is followed")
            return
        }
        #expect(url == "http://a.example/to")
        #expect(leavesOrigin)
    }

    // MARK: Hop limit and loops

    @Test(arguments: [
        // (maxRedirects, hopsSoFar, followed)
        (0, 0, false), (1, 0, true), (1, 1, false), (3, 2, true), (3, 3, false), (10, 9, true), (10, 10, false),
        (10, 11, false),
    ])
    func theHopLimit(maxRedirects: Int, hopsSoFar: Int, followed: Bool) {
        let outcome = decide(policy: .follow(maxRedirects: maxRedirects), hopsSoFar: hopsSoFar)
        if followed {
            #expect(outcome == decide())
        } else {
            #expect(outcome == .fail(.tooManyRedirects, "more than \(maxRedirects) redirects"))
        }
    }

    @Test func theDefaultPolicyAllowsTenHops() {
        #expect(decide(hopsSoFar: 9) == decide())
        #expect(decide(hopsSoFar: 10) == .fail(.tooManyRedirects, "more than 10 redirects"))
    }

    /// A hop to a request already made is a loop, judged by the next request's method and URL.
    @Test(arguments: [
        // (status, method, visited, loops)
        (302, "GET", "GET https://a.example/to", true),
        (302, "POST", "GET https://a.example/to", true),  // rewritten to GET
        (302, "POST", "POST https://a.example/to", false),
        (303, "PUT", "GET https://a.example/to", true),
        (307, "POST", "POST https://a.example/to", true),
        (307, "POST", "GET https://a.example/to", false),  // the method stays POST
        (308, "PUT", "PUT https://a.example/to", true),
        (302, "GET", "GET https://a.example/elsewhere", false),
        (302, "GET", "GET https://a.example/from", false),  // where it came from, not where it goes
    ])
    func aHopBackToAVisitedRequestIsALoop(status: Int, methodName: String, visited: String, loops: Bool) throws {
        let request = makeRequest(try #require(HTTPRequest.Method(methodName)))
        let outcome = decide(request, status: status, visited: [visited])
        if loops {
            #expect(outcome == .fail(.tooManyRedirects, "the redirects loop back to \(visited)"))
        } else {
            #expect(outcome == decide(request, status: status))
        }
        // Without loop detection (a cookie jar: a login bounce revisits URLs legitimately) it is followed.
        #expect(decide(request, status: status, visited: [visited], detectsLoops: false) == decide(request, status: status))
    }

    // MARK: Which refusal comes first

    @Test func refusalsComeInOrder() {
        let oneHop = RedirectPolicy.follow(maxRedirects: 1)
        // An unparsable Location before everything (the policy included).
        #expect(decide(to: nil, policy: .doNotFollow) == .fail(.redirectRefused, "the redirect's Location cannot be parsed"))
        // A refused scheme before the hop limit.
        #expect(
            decide(to: "ftp://a.example/x", policy: oneHop, hopsSoFar: 1)
                == .fail(.redirectRefused, "a redirect to the ftp scheme is refused"))
        // https→http before the hop limit.
        #expect(
            decide(to: "http://a.example/to", policy: oneHop, hopsSoFar: 1)
                == .fail(.redirectRefused, "a redirect from https to http is refused"))
        // The hop limit before a loop.
        #expect(
            decide(policy: oneHop, hopsSoFar: 1, visited: ["GET https://a.example/to"])
                == .fail(.tooManyRedirects, "more than 1 redirects"))
    }

    // MARK: Fields across origins

    /// A hop that leaves the origin (another host, port or scheme) keeps content negotiation, and
    /// `Content-Type` only when the body is sent again.
    @Test(arguments: [
        // (target, status, method, next method, fields kept, body kept)
        ("https://b.example/to", 307, "POST", "POST", negotiationFields + [formType], true),
        ("https://b.example/to", 308, "PUT", "PUT", negotiationFields + [formType], true),
        ("https://b.example/to", 302, "PUT", "PUT", negotiationFields + [formType], true),
        ("https://b.example/to", 303, "POST", "GET", negotiationFields, false),
        ("https://b.example/to", 302, "POST", "GET", negotiationFields, false),
        ("https://a.example:8443/to", 307, "POST", "POST", negotiationFields + [formType], true),
        ("https://a.example:8443/to", 303, "POST", "GET", negotiationFields, false),
        ("https://a.example.org/to", 301, "DELETE", "DELETE", negotiationFields + [formType], true),
        ("https://sub.a.example/to", 303, "GET", "GET", negotiationFields, false),
    ])
    func aHopThatLeavesTheOriginKeepsOnlyContentNegotiation(
        target: String, status: Int, methodName: String, nextMethod: String, fields: [String], keepsBody: Bool
    ) throws {
        let method = try #require(HTTPRequest.Method(methodName))
        #expect(
            decide(makeRequest(method), status: status, to: target)
                == .follow(method: nextMethod, url: target, fields: fields, body: keepsBody ? body : nil, leavesOrigin: true))
    }

    @Test func anotherSchemeLeavesTheOrigin() {
        // http://a.example:443 shares host and port with the origin; only the scheme differs.
        #expect(
            decide(status: 307, to: "http://a.example:443/to", policy: .follow(allowsHTTPSToHTTP: true))
                == .follow(
                    method: "POST", url: "http://a.example:443/to",
                    fields: negotiationFields + [formType], body: body,
                    leavesOrigin: true))
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func aHopWithinTheOriginKeepsEveryField(status: Int) {
        // The default port written out is the same origin.
        for url in [sameOriginURL, "https://a.example:443/to", "https://a.example/from?again=1"] {
            guard case .follow(_, _, let fields, _, let leavesOrigin) = decide(makeRequest(.put), status: status, to: url) else {
                Issue.record("\(status) to \(url) is followed")
                continue
            }
            #expect(fields == (status == 303 ? negotiationFields + privateFields : allFields), "\(url)")
            #expect(!leavesOrigin, "\(url)")
        }
    }

    /// A field marked never to be indexed (a secret, by HPACK's convention) never leaves the origin,
    /// even one content negotiation would keep; within the origin it stays.
    @Test func aNeverIndexedFieldStaysWithinTheOrigin() {
        var request = makeRequest(.post, fields: negotiationFields)
        var secretAccept = HTTPField(name: .accept, value: "application/vnd.secret+json")
        secretAccept.indexingStrategy = .disallow
        var secretType = HTTPField(name: .contentType, value: "text/plain")
        secretType.indexingStrategy = .disallow
        request.headerFields.append(secretAccept)
        request.headerFields.append(secretType)
        let withSecrets = negotiationFields + ["Accept: application/vnd.secret+json", "Content-Type: text/plain"]
        #expect(
            decide(request, status: 307, to: "https://b.example/to")
                == .follow(method: "POST", url: "https://b.example/to", fields: negotiationFields, body: body, leavesOrigin: true))
        #expect(
            decide(request, status: 307)
                == .follow(method: "POST", url: sameOriginURL, fields: withSecrets, body: body, leavesOrigin: false))
        // Other strategies are no secret.
        var avoided = HTTPField(name: .userAgent, value: "other-agent")
        avoided.indexingStrategy = .avoid
        var plain = makeRequest(.get, fields: [])
        plain.headerFields.append(avoided)
        #expect(
            decide(plain, status: 302, to: "https://b.example/to")
                == .follow(
                    method: "GET", url: "https://b.example/to", fields: ["User-Agent: other-agent"], body: body,
                    leavesOrigin: true))
    }

    // MARK: Bodies

    /// A 307 or 308 sends the body again; a body held in memory can be.
    @Test(arguments: [307, 308], ["https://a.example/to", "https://b.example/to"])
    func aReplayableBodyIsSentAgain(status: Int, target: String) {
        guard case .follow(let method, _, _, let resent, _) = decide(status: status, to: target) else {
            Issue.record("\(status) is followed")
            return
        }
        #expect(method == "POST")
        #expect(resent == body)
    }

    /// A stream produced once cannot be sent again: a 307 or 308 is refused; a replayable stream and a
    /// file are sent again; a hop that drops the body does not care.
    @Test(arguments: [307, 308])
    func aBodyThatCannotBeReplayedRefusesAResend(status: Int) throws {
        var oneShot = makeRequest()
        oneShot.body = .stream { writer in try await writer.write("x") }
        #expect(
            decide(oneShot, status: status)
                == .fail(.bodyNotReplayable, "a \(status) redirect resends the body, which cannot be replayed"))
        var replayable = makeRequest()
        replayable.body = .stream(replayable: true) { writer in try await writer.write("x") }
        guard case .follow(_, _, _, let resent, _) = decide(replayable, status: status) else {
            Issue.record("a replayable stream is followed")
            return
        }
        #expect(resent == "stream of unknown length")
        var file = makeRequest()
        file.body = try .file(#filePath)
        guard case .follow = decide(file, status: status) else {
            Issue.record("a file is followed")
            return
        }
        // 301 and 302 turn a POST into a GET without a body, which needs no replay.
        #expect(decide(oneShot, status: 302) == .follow(method: "GET", url: sameOriginURL, fields: negotiationFields + privateFields, body: nil, leavesOrigin: false))
    }

    @Test func aRequestWithoutABodyKeepsItsFieldsButSendsNoBody() {
        var request = makeRequest(.put)
        request.body = nil
        #expect(
            decide(request, status: 307)
                == .follow(method: "PUT", url: sameOriginURL, fields: allFields, body: nil, leavesOrigin: false))
        // Across origins no body is sent, so no Content-Type follows either.
        #expect(
            decide(request, status: 307, to: "https://b.example/to")
                == .follow(method: "PUT", url: "https://b.example/to", fields: negotiationFields, body: nil, leavesOrigin: true))
    }
}
