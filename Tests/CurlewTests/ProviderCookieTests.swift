// Curlew — opting a provider's requests out of the session's cookie jar: from the request closure and
// from the target's transfer options.

import Curlew
import CurlewTesting
import Foundation
import Testing

/// A target whose transfer options may opt out of cookies.
private struct CookieTarget: TargetType {
    var base: String
    var path: String
    var handlesCookies: Bool? = nil

    var baseURL: URL { URL(string: base)! }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
    var transferOptions: TransferOptions { TransferOptions(handlesCookies: handlesCookies) }
}

/// `/login` sets `sid=1`; `/private/login` sets `private=2`; every path answers 200.
private let handler: LocalHTTPServer.Handler = { request in
    switch request.path {
    case "/login": .respond(status: 200, headers: [("Set-Cookie", "sid=1")])
    case "/private/login": .respond(status: 200, headers: [("Set-Cookie", "private=2")])
    default: .respond(status: 200)
    }
}

@Suite(.serialized) struct ProviderCookieTests {
    /// Runs `body` with the server and a session that keeps cookies in memory.
    func withCookieSession<T>(_ body: (LocalHTTPServer, CurlSession) async throws -> T) async throws -> T {
        let server = try await LocalHTTPServer.start(handler: handler)
        var configuration = SessionConfiguration()
        configuration.cookies = .inMemory
        let session = try CurlSession(configuration: configuration)
        defer { session.syncShutdown() }
        do {
            let result = try await body(server, session)
            try await server.shutdown()
            return result
        } catch {
            try await server.shutdown()
            throw error
        }
    }

    /// The `Cookie` field of the last request the server received.
    func lastCookie(_ server: LocalHTTPServer) throws -> String? {
        try #require(server.requests.last).header("Cookie")
    }

    @Test func aRequestClosureOptsOutPerRequest() async throws {
        try await withCookieSession { server, session in
            // Paths under /private leave the jar alone.
            let provider = Provider<CookieTarget>(
                requestClosure: { endpoint in
                    var request = try endpoint.urlRequest()
                    if endpoint.url.contains("/private") { request.options.handlesCookies = false }
                    return request
                }, session: session)
            let base = server.baseURL
            _ = try await provider.request(CookieTarget(base: base, path: "/login"))
            _ = try await provider.request(CookieTarget(base: base, path: "/public"))
            #expect(try lastCookie(server) == "sid=1")
            // Opted out: no Cookie sent, and its Set-Cookie not stored.
            let optedOut = try await provider.request(CookieTarget(base: base, path: "/private/login"))
            #expect(optedOut.statusCode == 200)
            #expect(optedOut.request?.options.handlesCookies == false)
            #expect(try lastCookie(server) == nil)
            #expect(await session.cookies().map(\.name) == ["sid"])
            _ = try await provider.request(CookieTarget(base: base, path: "/private/page"))
            #expect(try lastCookie(server) == nil)
            // Requests that do not opt out still send the jar's cookies, and only those.
            _ = try await provider.request(CookieTarget(base: base, path: "/public"))
            #expect(try lastCookie(server) == "sid=1")
            #expect(server.requests.map(\.path) == ["/login", "/public", "/private/login", "/private/page", "/public"])
        }
    }

    @Test func aTargetsTransferOptionsOptOut() async throws {
        try await withCookieSession { server, session in
            let provider = Provider<CookieTarget>(session: session)
            let base = server.baseURL
            _ = try await provider.request(CookieTarget(base: base, path: "/login"))
            _ = try await provider.request(CookieTarget(base: base, path: "/private/login", handlesCookies: false))
            #expect(try lastCookie(server) == nil)
            #expect(await session.cookies().map(\.name) == ["sid"])
            _ = try await provider.request(CookieTarget(base: base, path: "/page", handlesCookies: true))
            #expect(try lastCookie(server) == "sid=1")
            // An endpoint closure can replace the target's options too.
            let replacing = Provider<CookieTarget>(
                endpointClosure: { target in
                    Endpoint.default(for: target).replacing(transferOptions: TransferOptions(handlesCookies: false))
                }, session: session)
            _ = try await replacing.request(CookieTarget(base: base, path: "/page"))
            #expect(try lastCookie(server) == nil)
        }
    }
}
