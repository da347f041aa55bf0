// Curlew — redirects followed by the engine, hop by hop, against real servers: every rule of the policy.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// What a server received, as the reply body: method, URI, header lines and body.
private let echo: LocalHTTPServer.Handler = { request in
    let fields = request.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    return .text("\(request.method) \(request.uri)\n\(fields)\n\n\(request.bodyText)")
}

/// A server that redirects `/from` to `location` with `status` and echoes everything else.
private func redirecting(_ status: Int, to location: @escaping @Sendable () -> String) -> LocalHTTPServer.Handler {
    { request in
        request.path == "/from" ? .respond(status: status, headers: [("Location", location())]) : await echo(request)
    }
}

/// The echoed request: method and URI, header fields by name, body.
private struct Echo {
    let method: String
    let uri: String
    let fields: [(String, String)]
    let body: String

    init(_ response: TransportResponse) {
        let text = response.body.text
        let parts = text.components(separatedBy: "\n\n")
        let lines = parts[0].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let first = lines[0].split(separator: " ", maxSplits: 1).map(String.init)
        method = first[0]
        uri = first.count > 1 ? first[1] : ""
        fields = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...].dropFirst()))
        }
        body = parts.dropFirst().joined(separator: "\n\n")
    }

    func value(_ name: String) -> String? { fields.first { $0.0.lowercased() == name.lowercased() }?.1 }
}

@Suite struct RedirectTests {
    // MARK: Methods and bodies

    @Test(arguments: [
        (301, "POST", "GET", false),
        (302, "POST", "GET", false),
        (303, "POST", "GET", false),
        (303, "PUT", "GET", false),
        (303, "DELETE", "GET", false),
        (301, "PUT", "PUT", true),
        (302, "PATCH", "PATCH", true),
        (307, "POST", "POST", true),
        (308, "PUT", "PUT", true),
    ])
    func methodRewritesAndBodies(status: Int, method: String, expectedMethod: String, resendsBody: Bool) async throws {
        let location = Locked("")
        try await withServerAndSession(handler: redirecting(status) { location.withLock { $0 } }) { server, session in
            location.withLock { $0 = server.url("/to") }
            let request = TransportRequest(
                url: server.url("/from"), method: HTTPRequest.Method(method)!,
                headerFields: [.contentType: "application/json", .contentLanguage: "en", .accept: "text/plain"],
                body: .string(#"{"a":1}"#))
            let response = try await session.execute(request)
            let echoed = Echo(response)
            #expect(response.status == .ok)
            #expect(echoed.method == expectedMethod)
            #expect(echoed.uri == "/to")
            #expect(echoed.body == (resendsBody ? #"{"a":1}"# : ""))
            #expect(echoed.value("Content-Type") == (resendsBody ? "application/json" : nil))
            #expect(echoed.value("Content-Language") == (resendsBody ? "en" : nil))
            #expect(echoed.value("Content-Length") == (resendsBody ? "7" : nil))
            #expect(echoed.value("Accept") == "text/plain")
            #expect(response.redirects == [RedirectStep(url: server.url("/from"), status: HTTPResponse.Status(code: status))])
            #expect(response.effectiveURL == server.url("/to"))
        }
    }

    /// An empty `Location` is the same URL (RFC 3986 §5.2.2), through `execute` and the scoped exchange:
    /// a POST answered 303 with one is followed by a GET of the same URI, query kept.
    @Test(arguments: [false, true])
    func anEmptyLocationIsTheSameURL(streamed: Bool) async throws {
        let handler: LocalHTTPServer.Handler = { request in
            request.method == "POST" ? .respond(status: 303, headers: [("Location", "")]) : await echo(request)
        }
        try await withServerAndSession(handler: handler) { server, session in
            let request = TransportRequest(url: server.url("/a/b?q=1"), method: .post, body: .string("x"))
            let status: Int
            if streamed {
                status = try await session.perform(request) { head, _ in head.status.code }
            } else {
                status = try await session.execute(request).status.code
            }
            #expect(status == 200)
            #expect(server.requests.map { "\($0.method) \($0.uri)" } == ["POST /a/b?q=1", "GET /a/b?q=1"])
        }
    }

    @Test func headStaysHeadAfterA303() async throws {
        let location = Locked("")
        try await withServerAndSession(handler: redirecting(303) { location.withLock { $0 } }) { server, session in
            location.withLock { $0 = server.url("/to") }
            let response = try await session.execute(TransportRequest(url: server.url("/from"), method: .head))
            #expect(response.status == .ok)
            #expect(server.requests.map { "\($0.method) \($0.uri)" } == ["HEAD /from", "HEAD /to"])
        }
    }

    @Test(arguments: [300, 304, 305, 306, 399])
    func otherRedirectStatusesAreReturned(status: Int) async throws {
        try await withServerAndSession(handler: redirecting(status) { "/to" }) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/from")))
            #expect(response.status.code == status)
            #expect(response.redirects.isEmpty)
            #expect(server.statistics.requestsReceived == 1)
        }
    }

    @Test func aRedirectWithoutLocationIsReturned() async throws {
        try await withServerAndSession(handler: { _ in .respond(status: 302) }) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/from")))
            #expect(response.status == .found)
            #expect(response.redirectURL == nil)
        }
    }

    @Test func relativeLocationsResolveAgainstTheRequest() async throws {
        let handler: LocalHTTPServer.Handler = { request in
            switch request.path {
            case "/a/b": .respond(status: 302, headers: [("Location", "../c?x=1")])
            case "/c": .respond(status: 301, headers: [("Location", "/d")])
            default: await echo(request)
            }
        }
        try await withServerAndSession(handler: handler) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/a/b")))
            #expect(Echo(response).uri == "/d")
            #expect(response.redirects.map(\.url) == [server.url("/a/b"), server.url("/c?x=1")])
            #expect(response.redirects.map(\.status.code) == [302, 301])
            #expect(response.effectiveURL == server.url("/d"))
        }
    }

    // MARK: Credentials never leave the origin

    /// Fields as a target, an endpoint or a plugin would set them.
    static let sensitive: HTTPFields = {
        var fields: HTTPFields = [
            .authorization: "Bearer secret", .cookie: "session=1", HTTPField.Name("X-Api-Key")!: "k-123",
            HTTPField.Name("X-Tenant")!: "acme", .accept: "application/json", .acceptLanguage: "nb",
            .proxyAuthorization: "Basic cHJveHk=",
        ]
        var signed = HTTPField(name: HTTPField.Name("X-Signed")!, value: "sig")
        signed.indexingStrategy = .disallow
        fields.append(signed)
        return fields
    }()

    static let stripped = ["Authorization", "Cookie", "X-Api-Key", "X-Tenant", "Proxy-Authorization", "X-Signed"]

    @Test func aHopToAnotherPortKeepsOnlyContentNegotiation() async throws {
        let second = try await LocalHTTPServer.start(handler: echo)
        try await withServerAndSession(handler: redirecting(302) { second.url("/to") }) { first, session in
            let response = try await session.execute(TransportRequest(url: first.url("/from"), headerFields: Self.sensitive))
            let received = try #require(second.requests.first)
            for name in Self.stripped { #expect(received.header(name) == nil, "\(name) followed to another port") }
            #expect(received.header("Accept") == "application/json")
            #expect(received.header("Accept-Language") == "nb")
            #expect(received.header("User-Agent") == "Curlew/0.1")
            #expect(response.effectiveURL == second.url("/to"))
            // The first server got everything.
            let original = try #require(first.requests.first)
            #expect(original.header("Authorization") == "Bearer secret")
            #expect(original.header("X-Api-Key") == "k-123")
        }
        try await second.shutdown()
    }

    @Test func aHopToAnotherHostNameKeepsOnlyContentNegotiation() async throws {
        // Same server, another host name for it: a different origin.
        let port = Locked(0)
        try await withServerAndSession(handler: redirecting(307) { "http://localhost:\(port.withLock { $0 })/to" }) {
            server, session in
            port.withLock { $0 = server.port }
            let request = TransportRequest(
                url: server.url("/from"), method: .post, headerFields: Self.sensitive + [.contentType: "text/plain"],
                body: .string("payload"))
            let response = try await session.execute(request)
            let received = try #require(server.requests.last)
            #expect(received.uri == "/to")
            for name in Self.stripped { #expect(received.header(name) == nil, "\(name) followed to another host") }
            #expect(received.header("Host") == "localhost:\(server.port)")
            // The body is sent again, with its type.
            #expect(received.bodyText == "payload")
            #expect(received.header("Content-Type") == "text/plain")
            #expect(response.redirects.map(\.status) == [.temporaryRedirect])
        }
    }

    @Test func aHopWithinTheOriginKeepsEveryField() async throws {
        try await withServerAndSession(handler: redirecting(302) { "/to" }) { server, session in
            _ = try await session.execute(TransportRequest(url: server.url("/from"), headerFields: Self.sensitive))
            let received = try #require(server.requests.last)
            #expect(received.uri == "/to")
            #expect(received.header("Authorization") == "Bearer secret")
            #expect(received.header("Cookie") == "session=1")
            #expect(received.header("X-Api-Key") == "k-123")
            #expect(received.header("X-Signed") == "sig")
        }
    }

    // MARK: Refusals

    @Test(arguments: ["ftp://127.0.0.1/file", "file:///etc/passwd", "gopher://127.0.0.1/"])
    func otherSchemesAreRefused(location: String) async throws {
        try await withServerAndSession(handler: redirecting(302) { location }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/from"))) }
            #expect(error?.code == .redirectRefused)
            #expect(error?.location == location)
            #expect(server.statistics.requestsReceived == 1)
        }
    }

    @Test func anUnparseableLocationIsRefusedEvenWhenNotFollowing() async throws {
        try await withServerAndSession(handler: redirecting(301) { "http://[::1" }) { server, session in
            for policy in [RedirectPolicy.default, .doNotFollow] {
                var request = TransportRequest(url: server.url("/from"))
                request.redirectPolicy = policy
                let error = await transportError { try await session.execute(request) }
                #expect(error?.code == .redirectRefused)
                #expect(error?.location == "http://[::1")
            }
            #expect(server.statistics.requestsReceived == 2)
        }
    }

    @Test func aLoopIsTooManyRedirects() async throws {
        let handler: LocalHTTPServer.Handler = { request in
            .respond(status: 302, headers: [("Location", request.path == "/a" ? "/b" : "/a")])
        }
        try await withServerAndSession(handler: handler) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/a"))) }
            #expect(error?.code == .tooManyRedirects)
            #expect(error?.location == server.url("/a"))
            #expect(server.requests.map(\.uri) == ["/a", "/b"])
        }
    }

    @Test func moreHopsThanAllowedIsTooManyRedirects() async throws {
        let handler: LocalHTTPServer.Handler = { request in
            let n = Int(request.path.dropFirst()) ?? 0
            return .respond(status: 302, headers: [("Location", "/\(n + 1)")])
        }
        try await withServerAndSession(handler: handler) { server, session in
            var request = TransportRequest(url: server.url("/0"))
            request.redirectPolicy = .follow(maxRedirects: 3)
            let error = await transportError { try await session.execute(request) }
            #expect(error?.code == .tooManyRedirects)
            #expect(error?.location == server.url("/4"))
            #expect(server.requests.map(\.uri) == ["/0", "/1", "/2", "/3"])
            // The default allows 10.
            let defaultError = await transportError { try await session.execute(TransportRequest(url: server.url("/100"))) }
            #expect(defaultError?.code == .tooManyRedirects)
            #expect(server.requests.count == 4 + 11)
        }
    }

    // MARK: Policies

    @Test func doNotFollowReturnsTheRedirect() async throws {
        try await withServerAndSession(handler: redirecting(302) { "/to" }) { server, session in
            var request = TransportRequest(url: server.url("/from"))
            request.redirectPolicy = .doNotFollow
            let response = try await session.execute(request)
            #expect(response.status == .found)
            #expect(response.redirectURL == server.url("/to"))
            #expect(response.headerFields[.location] == "/to")
            #expect(server.statistics.requestsReceived == 1)
        }
        var configuration = SessionConfiguration()
        configuration.redirectPolicy = .doNotFollow
        try await withServerAndSession(configuration: configuration, handler: redirecting(302) { "/to" }) { server, session in
            let returned = try await session.execute(TransportRequest(url: server.url("/from")))
            #expect(returned.status == .found)
            var followed = TransportRequest(url: server.url("/from"))
            followed.redirectPolicy = .default
            let answer = try await session.execute(followed)
            #expect(answer.status == .ok)
        }
    }

    @Test func aCustomPolicySeesEachHopAndDecides() async throws {
        let handler: LocalHTTPServer.Handler = { request in
            switch request.path {
            case "/1": .respond(status: 301, headers: [("Location", "/2")])
            case "/2": .respond(status: 307, headers: [("Location", "/3")])
            case "/3": .respond(status: 302, headers: [("Location", "/4")])
            default: await echo(request)
            }
        }
        let seen = Locked<[String]>([])
        try await withServerAndSession(handler: handler) { server, session in
            var request = TransportRequest(url: server.url("/1"), method: .post, body: .string("x"))
            request.redirectPolicy = .custom { hop in
                seen.withLock {
                    $0.append("\(hop.hopsSoFar) \(hop.status.code) \(hop.from) -> \(hop.to) \(hop.nextRequest.method.rawValue) \(hop.leavesOrigin)")
                }
                return hop.to.hasSuffix("/3") ? .stop : .follow
            }
            let stopped = try await session.execute(request)
            #expect(stopped.status == .temporaryRedirect)
            #expect(stopped.redirects == [RedirectStep(url: server.url("/1"), status: .movedPermanently)])
            #expect(
                seen.withLock { $0 } == [
                    "0 301 \(server.url("/1")) -> \(server.url("/2")) GET false",
                    "1 307 \(server.url("/2")) -> \(server.url("/3")) GET false",
                ])
            request.redirectPolicy = .custom { _ in .refuse }
            let error = await transportError { try await session.execute(request) }
            #expect(error?.code == .redirectRefused)
            #expect(error?.location == server.url("/2"))
        }
    }

    @Test func oneTotalTimeoutSpansAllHops() async throws {
        let handler: LocalHTTPServer.Handler = { request in
            switch request.path {
            case "/1": .delayed(.milliseconds(250), .respond(status: 302, headers: [("Location", "/2")]))
            case "/2": .delayed(.milliseconds(250), .respond(status: 302, headers: [("Location", "/3")]))
            default: .delayed(.milliseconds(250), .text("done"))
            }
        }
        try await withServerAndSession(handler: handler) { server, session in
            // Each hop alone fits in 600 ms; the three together do not.
            let request = TransportRequest(url: server.url("/1"), timeout: .milliseconds(600))
            let error = await transportError { try await session.execute(request) }
            #expect(error?.code == .timedOut)
            #expect(error?.timeout == .total)
            let relaxed = TransportRequest(url: server.url("/1"), timeout: .seconds(30))
            let response = try await session.execute(relaxed)
            #expect(response.body.text == "done")
            #expect(response.redirects.count == 2)
            // Both earlier hops are recorded, as they happened (how long they took is the benchmarks' business).
            #expect(
                response.redirects == [
                    RedirectStep(url: server.url("/1"), status: .found), RedirectStep(url: server.url("/2"), status: .found),
                ])
        }
    }

    @Test func cancellingDuringAHopEndsTheCall() async throws {
        let handler: LocalHTTPServer.Handler = { request in
            request.path == "/from" ? .respond(status: 302, headers: [("Location", "/hang")]) : .hang
        }
        try await withServerAndSession(handler: handler) { server, session in
            let call = Task { await transportError { try await session.execute(TransportRequest(url: server.url("/from"))) } }
            #expect(await eventually { server.statistics.requestsReceived == 2 })
            call.cancel()
            #expect(await call.value?.code == .cancelled)
            #expect(await eventually { session.statistics.activeTransfers == 0 })
        }
    }
}
