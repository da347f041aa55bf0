// Curlew — the session's cookie jar against real servers on loopback, reached as `a.test` and
// `b.a.test` through host overrides (LocalHTTPServer for http; h2_server.py, whose fixture leaf covers
// `a.test` and `*.a.test`, for https).

@testable import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// Answers by path; any path sets the cookies given as `c1`, `c2`, … (each a whole `Set-Cookie` value).
/// `/start`, `/mid`: redirects (see `aRedirectHopsAcrossHostsSendWhatTheJarAllows`). `/login`: 302 to
/// `/home` with `sid=42`.
private let cookieHandler: LocalHTTPServer.Handler = { request in
    var headers: [(String, String)] = []
    for name in request.query.keys.sorted() where name.hasPrefix("c") {
        headers.append(("Set-Cookie", request.query[name]!))
    }
    let port = request.header("Host")?.split(separator: ":").last.map(String.init) ?? "0"
    switch request.path {
    case "/login":
        return .respond(status: 302, headers: headers + [("Set-Cookie", "sid=42"), ("Location", "/home")])
    case "/start":
        return .respond(
            status: 302,
            headers: headers + [
                ("Set-Cookie", "host=1"), ("Set-Cookie", "dom=1; Domain=a.test"),
                ("Location", "http://b.a.test:\(port)/mid"),
            ])
    case "/mid":
        return .respond(
            status: 302, headers: headers + [("Set-Cookie", "bonly=1"), ("Location", "http://a.test:\(port)/end")])
    default:
        return .respond(status: 200, headers: headers, body: Array("ok".utf8))
    }
}

@Suite(.serialized, .timeLimit(.minutes(2))) struct CookieTests {
    /// `a.test` and `b.a.test` on each port, pointing at 127.0.0.1.
    static func overrides(_ ports: [Int]) -> [ConnectionOptions.HostOverride] {
        ports.flatMap { port in
            ["a.test", "b.a.test"].map { ConnectionOptions.HostOverride(host: $0, port: port, addresses: ["127.0.0.1"]) }
        }
    }

    static func configuration(_ storage: CookieStorage, ports: [Int]) -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.cookies = storage
        configuration.connections.hostOverrides = overrides(ports)
        return configuration
    }

    /// Runs `body` with a LocalHTTPServer (``cookieHandler``) and a session keeping cookies as `storage`.
    static func withCookieServer<T>(
        _ storage: CookieStorage = .inMemory, _ body: (LocalHTTPServer, CurlSession) async throws -> T
    ) async throws -> T {
        let server = try await LocalHTTPServer.start(handler: cookieHandler)
        do {
            let session = try CurlSession(configuration: configuration(storage, ports: [server.port]))
            do {
                let result = try await body(server, session)
                await session.shutdown()
                try await server.shutdown()
                return result
            } catch {
                await session.shutdown()
                throw error
            }
        } catch {
            try await server.shutdown()
            throw error
        }
    }

    /// `http://HOST:PORT/path?c1=…&c2=…`, each `Set-Cookie` value percent-encoded.
    static func url(_ server: LocalHTTPServer, _ path: String, host: String = "a.test", setting cookies: [String] = [])
        -> String
    {
        var url = "http://\(host):\(server.port)\(path)"
        for (index, cookie) in cookies.enumerated() {
            url += (index == 0 ? "?" : "&") + "c\(index + 1)="
                + cookie.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        }
        return url
    }

    /// Sends a GET and returns the `Cookie` field the server received (nil: none).
    @discardableResult
    static func cookieSent(
        _ session: CurlSession, _ server: LocalHTTPServer, _ url: String, options: TransferOptions = TransferOptions()
    ) async throws -> String? {
        var request = TransportRequest(url: url)
        request.options = options
        let response = try await session.execute(request)
        try #require(response.status.code == 200, "\(url): \(response.status.code)")
        let received = try #require(server.requests.last)
        try #require(received.uri == String(url.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" }))
        let fields = received.headers(named: "Cookie")
        try #require(fields.count <= 1, "several Cookie fields: \(fields)")
        return fields.first
    }

    /// The cookie names and values of a `Cookie` field, as a set (libcurl orders them by path length,
    /// then by other rules).
    static func pairs(_ field: String?) -> Set<String> {
        Set((field ?? "").split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
    }

    // MARK: Off by default

    @Test func cookiesAreOffByDefault() async throws {
        try await Self.withCookieServer(.disabled) { (server, session) async throws in
            let response = try await session.execute(TransportRequest(url: Self.url(server, "/set", setting: ["id=1"])))
            #expect(response.headerFields[values: .setCookie] == ["id=1"])
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == nil)
            #expect(await session.cookies().isEmpty)
            // The jar API does nothing without a jar.
            await session.storeCookies([CurlSession.Cookie(domain: "a.test", name: "stored", value: "1")])
            #expect(await session.cookies().isEmpty)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == nil)
        }
    }

    // MARK: The cookie rules

    @Test func aCookieGoesBackToTheHostThatSetIt() async throws {
        try await Self.withCookieServer { (server, session) async throws in
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["id=1"])) == nil)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "id=1")
            #expect(await session.cookies() == [CurlSession.Cookie(domain: "a.test", path: "/", name: "id", value: "1")])
        }
    }

    /// Either way of turning the cookie engine on (`CURLOPT_COOKIEFILE`, or on libcurl 7.88 `CURLOPT_COOKIEJAR`
    /// with no file: ``CurlQuirks/cookieFileListLeaksOnReset``) sends the jar's cookies on every request of
    /// a handle reset and reused, and none on a request that opts out. The file list is not used on a
    /// libcurl that leaks it (7.88: LeakSanitizer would report a node per request).
    @Test(arguments: CurlQuirks.current.cookieFileListLeaksOnReset ? [true] : [false, true])
    func everyRequestOfAReusedHandleSendsTheJar(engineOnWithoutAFileList: Bool) async throws {
        let server = try await LocalHTTPServer.start(handler: cookieHandler)
        var configuration = Self.configuration(.inMemory, ports: [server.port])
        configuration.quirks.cookieFileListLeaksOnReset = engineOnWithoutAFileList
        configuration.maxConnectionsPerHost = 1
        let session = try CurlSession(configuration: configuration)
        var optOut = TransferOptions()
        optOut.handlesCookies = false
        do {
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["id=1"])) == nil)
            for _ in 0..<4 {
                #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "id=1")
            }
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo"), options: optOut) == nil)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "id=1")
            #expect(session.statistics.handlesCreated == 1)
        } catch {
            Issue.record(error)
        }
        await session.shutdown()
        try await server.shutdown()
    }

    @Test func aHostOnlyCookieIsNotSentToASubdomain() async throws {
        try await Self.withCookieServer { (server, session) async throws in
            try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["host=1"]))
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo", host: "b.a.test")) == nil)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "host=1")
            // Nor the other way: b.a.test's host-only cookie stays with b.a.test.
            try await Self.cookieSent(session, server, Self.url(server, "/set", host: "b.a.test", setting: ["sub=1"]))
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "host=1")
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo", host: "b.a.test")) == "sub=1")
        }
    }

    @Test func aDomainCookieIsSentToSubdomains() async throws {
        try await Self.withCookieServer { (server, session) async throws in
            try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["dom=1; Domain=a.test"]))
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo", host: "b.a.test")) == "dom=1")
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "dom=1")
            #expect(
                await session.cookies() == [CurlSession.Cookie(domain: "a.test", includesSubdomains: true, name: "dom", value: "1")])
            // A subdomain may set a cookie for its parent domain.
            try await Self.cookieSent(
                session, server, Self.url(server, "/set", host: "b.a.test", setting: ["up=1; Domain=a.test"]))
            let sent1 = try await Self.cookieSent(session, server, Self.url(server, "/echo"))
            #expect(Self.pairs(sent1) == ["dom=1", "up=1"])
        }
    }

    @Test func aPathCookieIsSentOnlyUnderItsPath() async throws {
        try await Self.withCookieServer { (server, session) async throws in
            try await Self.cookieSent(session, server, Self.url(server, "/api/login", setting: ["p=1; Path=/api"]))
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/api/x")) == "p=1")
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/api")) == "p=1")
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/other")) == nil)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/apix")) == nil)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/")) == nil)
            #expect(await session.cookies() == [CurlSession.Cookie(domain: "a.test", path: "/api", name: "p", value: "1")])
        }
    }

    @Test func aSecureCookieIsSentOverHTTPSOnly() async throws {
        let fixtures = try await TLSFixtures.shared()
        let http = try await LocalHTTPServer.start(handler: cookieHandler)
        defer { Task { try? await http.shutdown() } }
        try await withH2TestServer(.tls(fixtures.leaf)) { https in
            var configuration = Self.configuration(.inMemory, ports: [http.port, https.port])
            configuration.tls.trustRoots = .file(fixtures.ca.certificate)
            let session = try CurlSession(configuration: configuration)
            defer { session.syncShutdown() }
            let set = https.url("/set-cookie?c=" + "s=1; Secure".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, host: "a.test")
            let first = try await session.execute(TransportRequest(url: set))
            #expect(first.status.code == 200)
            #expect(first.httpVersion == .http2)
            #expect(await session.cookies() == [CurlSession.Cookie(domain: "a.test", secure: true, name: "s", value: "1")])
            // Sent over https (here HTTP/2) ...
            let again = try await session.execute(TransportRequest(url: https.url("/ok", host: "a.test")))
            #expect(try H2Report(again.body).cookie == "s=1")
            // ... not over http to the same host.
            #expect(try await Self.cookieSent(session, http, Self.url(http, "/echo")) == nil)
            // And plain http cannot set a Secure cookie at all.
            try await Self.cookieSent(session, http, Self.url(http, "/set", setting: ["t=1; Secure"]))
            #expect(await session.cookies() == [CurlSession.Cookie(domain: "a.test", secure: true, name: "s", value: "1")])
        }
        try await http.shutdown()
    }

    @Test func maxAgeOneIsNotSentOneAndAHalfSecondsLater() async throws {
        try await Self.withCookieServer { (server, session) async throws in
            // libcurl keeps expiry in whole seconds and drops a cookie once `expires < now`: Max-Age=1 set
            // at second S lives through S+1. Set in the second half of a second, so 1.5 s later is S+2.
            try await Self.waitForFraction(in: 0.5..<0.8)
            let before = Int(Date().timeIntervalSince1970)
            try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["m=1; Max-Age=1"]))
            let cookies = await session.cookies()
            #expect(cookies.count == 1)
            #expect(cookies.first?.expires == before + 1)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "m=1")
            try await Task.sleep(for: .milliseconds(1500))
            // Listed no more, though libcurl keeps it until a request makes it purge expired cookies.
            #expect(await session.cookies().isEmpty)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == nil)
            #expect(await session.cookies().isEmpty)
        }
    }

    @Test func maxAgeCountsWholeSeconds() async throws {
        // What 7.88.1 does with the same cookie set early in a second: still sent 1.5 s later (the clock
        // is then in second S+1, and `S+1 < S+1` is false), gone once the clock reaches S+2.
        try await Self.withCookieServer { (server, session) async throws in
            try await Self.waitForFraction(in: 0.05..<0.25)
            let second = Int(Date().timeIntervalSince1970)
            try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["m=1; Max-Age=1"]))
            #expect(await session.cookies().first?.expires == second + 1)
            try await Self.sleep(until: Double(second) + 1.4)  // at least 1.15 s after it was set
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "m=1")
            try await Self.sleep(until: Double(second) + 2.1)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == nil)
        }
    }

    /// Sleeps until the wall clock reads `time` (seconds since 1970).
    static func sleep(until time: Double) async throws {
        let wait = time - Date().timeIntervalSince1970
        if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
    }

    /// Sleeps until the wall clock's fraction of a second is in `range`.
    static func waitForFraction(in range: Range<Double>) async throws {
        let now = Date().timeIntervalSince1970
        let fraction = now - now.rounded(.down)
        if range.contains(fraction) { return }
        let target = range.lowerBound + 0.02
        let wait = target > fraction ? target - fraction : 1 - fraction + target
        try await Task.sleep(for: .milliseconds(Int(wait * 1000)))
    }

    @Test func maxAgeZeroDeletesACookie() async throws {
        try await Self.withCookieServer { (server, session) async throws in
            try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["d=1", "keep=1"]))
            let sent2 = try await Self.cookieSent(session, server, Self.url(server, "/echo"))
            #expect(Self.pairs(sent2) == ["d=1", "keep=1"])
            try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["d=1; Max-Age=0"]))
            // libcurl keeps the deleted cookie (expires 1, i.e. 1970) until a request to its host purges
            // expired cookies; the list leaves it out at once.
            #expect(await session.cookies() == [CurlSession.Cookie(domain: "a.test", name: "keep", value: "1")])
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "keep=1")
            #expect(await session.cookies() == [CurlSession.Cookie(domain: "a.test", name: "keep", value: "1")])
        }
    }

    @Test func httpOnlyIsKept() async throws {
        try await Self.withCookieServer { (server, session) async throws in
            try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["h=1; HttpOnly"]))
            #expect(await session.cookies() == [CurlSession.Cookie(domain: "a.test", httpOnly: true, name: "h", value: "1")])
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "h=1")
        }
    }

    // MARK: Redirects

    @Test func aCookieSetOnARedirectIsSentOnTheNextHop() async throws {
        try await Self.withCookieServer { (server, session) async throws in
            let response = try await session.execute(TransportRequest(url: Self.url(server, "/login")))
            #expect(response.status.code == 200)
            #expect(response.redirects.map(\.status) == [302])
            let requests = server.requests
            #expect(requests.map(\.path) == ["/login", "/home"])
            #expect(requests.map { $0.header("Cookie") } == [nil, "sid=42"])
        }
    }

    @Test func aRedirectHopsAcrossHostsSendWhatTheJarAllows() async throws {
        // a.test/start sets host=1 (host-only) and dom=1 (Domain=a.test), then b.a.test/mid sets bonly=1
        // (host-only), then a.test/end.
        try await Self.withCookieServer { (server, session) async throws in
            let response = try await session.execute(TransportRequest(url: Self.url(server, "/start")))
            #expect(response.status.code == 200)
            #expect(response.effectiveURL == "http://a.test:\(server.port)/end")
            let requests = server.requests
            #expect(requests.map(\.path) == ["/start", "/mid", "/end"])
            #expect(requests.map { $0.header("Host") } == ["a.test", "b.a.test", "a.test"].map { "\($0):\(server.port)" })
            #expect(requests[0].header("Cookie") == nil)
            #expect(requests[1].header("Cookie") == "dom=1")
            #expect(Self.pairs(requests[2].header("Cookie")) == ["host=1", "dom=1"])
        }
    }

    // MARK: Opting out

    @Test func optingOutOnAPooledHandleSendsAndStoresNothing() async throws {
        var optOut = TransferOptions()
        optOut.handlesCookies = false
        try await Self.withCookieServer { (server, session) async throws in
            // One request at a time: every one of them runs on the same pooled easy handle, which held
            // the jar before the opted-out requests.
            try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["a=1"]))
            let optedOut = try await Self.cookieSent(
                session, server, Self.url(server, "/set", setting: ["b=2"]), options: optOut)
            #expect(optedOut == nil)
            #expect(server.requests.last?.uri.hasPrefix("/set?c1=b") == true)
            #expect(await session.cookies() == [CurlSession.Cookie(domain: "a.test", name: "a", value: "1")])
            // The opted-out response's cookie is not kept on the handle either.
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo"), options: optOut) == nil)
            // And the jar is back for requests that do not opt out.
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "a=1")
            let statistics = session.statistics
            #expect(statistics.handlesCreated == 1)
            #expect(statistics.completedTransfers == 4)
        }
    }

    @Test func handlesCookiesTrueIsTheSessionsSetting() async throws {
        var optIn = TransferOptions()
        optIn.handlesCookies = true
        try await Self.withCookieServer { (server, session) async throws in
            try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["a=1"]), options: optIn)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo"), options: optIn) == "a=1")
        }
        // It cannot turn on a jar the session does not have.
        try await Self.withCookieServer(.disabled) { (server, session) async throws in
            try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["a=1"]), options: optIn)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo"), options: optIn) == nil)
        }
    }

    // MARK: The jar API

    @Test func storedCookiesAreSentAndListedWithEveryField() async throws {
        try await Self.withCookieServer { (server, session) async throws in
            let plain = CurlSession.Cookie(domain: "a.test", name: "k", value: "v")
            let full = CurlSession.Cookie(
                domain: "a.test", includesSubdomains: true, path: "/api", secure: true, httpOnly: true,
                expires: 4_102_444_800, name: "full", value: "x y")
            await session.storeCookies([plain, full])
            #expect(Set(await session.cookies()) == [plain, full])
            #expect(await session.cookies().count == 2)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "k=v")
            // `full` is Secure: not over http, even under /api.
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/api/x")) == "k=v")
            // Storing the same name, domain and path replaces.
            await session.storeCookies([CurlSession.Cookie(domain: "a.test", name: "k", value: "w")])
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "k=w")
            #expect(await session.cookies().count == 2)
        }
    }

    @Test func clearCookiesEmptiesTheJar() async throws {
        try await Self.withCookieServer { (server, session) async throws in
            try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["a=1", "b=2"]))
            await session.storeCookies([CurlSession.Cookie(domain: "b.a.test", name: "c", value: "3")])
            #expect(await session.cookies().count == 3)
            await session.clearCookies()
            #expect(await session.cookies().isEmpty)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == nil)
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo", host: "b.a.test")) == nil)
            // The jar still works afterwards.
            try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["d=4"]))
            #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "d=4")
        }
    }

    /// The cookie lines of a Netscape cookie file (its `# ` comments and blank lines left out).
    static func cookieLines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: true)
            .map(String.init).filter { !$0.hasPrefix("# ") }.sorted()
    }

    @Test func aFileJarIsWrittenByFlushAndShutdownAndLoadedByTheNextSession() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("curlew-cookies-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/jar.txt"
        let server = try await LocalHTTPServer.start(handler: cookieHandler)
        defer { Task { try? await server.shutdown() } }

        let first = try CurlSession(configuration: Self.configuration(.file(path), ports: [server.port]))
        try await Self.cookieSent(
            first, server, Self.url(server, "/set", setting: ["sess=1", "kept=2; Max-Age=3600", "h=3; HttpOnly"]))
        let expires = try #require(await first.cookies().first { $0.name == "kept" }?.expires)
        #expect(!FileManager.default.fileExists(atPath: path))
        await first.flushCookies()
        #expect(
            try Self.cookieLines(path)
                == [
                    "#HttpOnly_a.test\tFALSE\t/\tFALSE\t0\th\t3",
                    "a.test\tFALSE\t/\tFALSE\t0\tsess\t1",
                    "a.test\tFALSE\t/\tFALSE\t\(expires)\tkept\t2",
                ].sorted())
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("# Netscape HTTP Cookie File"))
        // Shutdown writes what was added since.
        await first.storeCookies([CurlSession.Cookie(domain: "a.test", includesSubdomains: true, name: "late", value: "4")])
        await first.shutdown()
        #expect(
            try Self.cookieLines(path)
                == [
                    "#HttpOnly_a.test\tFALSE\t/\tFALSE\t0\th\t3",
                    "a.test\tFALSE\t/\tFALSE\t0\tsess\t1",
                    "a.test\tFALSE\t/\tFALSE\t\(expires)\tkept\t2",
                    ".a.test\tTRUE\t/\tFALSE\t0\tlate\t4",
                ].sorted())

        // A new session starts with the file's cookies.
        let second = try CurlSession(configuration: Self.configuration(.file(path), ports: [server.port]))
        #expect(
            Set(await second.cookies()) == [
                CurlSession.Cookie(domain: "a.test", name: "sess", value: "1"),
                CurlSession.Cookie(domain: "a.test", expires: expires, name: "kept", value: "2"),
                CurlSession.Cookie(domain: "a.test", httpOnly: true, name: "h", value: "3"),
                CurlSession.Cookie(domain: "a.test", includesSubdomains: true, name: "late", value: "4"),
            ])
        let sent3 = try await Self.cookieSent(second, server, Self.url(server, "/echo"))
        #expect(
            Self.pairs(sent3)
                == ["sess=1", "kept=2", "h=3", "late=4"])
        #expect(try await Self.cookieSent(second, server, Self.url(server, "/echo", host: "b.a.test")) == "late=4")
        await second.shutdown()
        try await server.shutdown()
    }

    /// libcurl 7.88.1's `Curl_flush_cookies` reads every file in CURLOPT_COOKIEFILE again before it writes
    /// the jar, so a jar handle that kept its file there would bring back, at each flush, cookies deleted
    /// or cleared since the last one. The engine loads the file once and then forgets it.
    @Test func aFileJarDoesNotBringBackWhatWasDeletedOrCleared() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("curlew-cookies-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/jar.txt"
        let server = try await LocalHTTPServer.start(handler: cookieHandler)
        defer { Task { try? await server.shutdown() } }
        let session = try CurlSession(configuration: Self.configuration(.file(path), ports: [server.port]))
        let v1 = "a.test\tFALSE\t/\tFALSE\t0\tv\t1"
        let v2 = "a.test\tFALSE\t/\tFALSE\t0\tv\t2"
        let gone = "a.test\tFALSE\t/\tFALSE\t0\tgone\t1"
        try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["v=1", "gone=1"]))
        await session.flushCookies()
        #expect(try Self.cookieLines(path) == [gone, v1])
        // The server changes one cookie and deletes the other; the next request sends what is left.
        try await Self.cookieSent(session, server, Self.url(server, "/set", setting: ["v=2", "gone=1; Max-Age=0"]))
        #expect(try await Self.cookieSent(session, server, Self.url(server, "/echo")) == "v=2")
        #expect(await session.cookies() == [CurlSession.Cookie(domain: "a.test", name: "v", value: "2")])

        await session.flushCookies()
        let afterFlush = Set(await session.cookies())
        let fileAfterFlush = try Self.cookieLines(path)
        let sentAfterFlush = try await Self.pairs(Self.cookieSent(session, server, Self.url(server, "/echo")))
        #expect(afterFlush == [CurlSession.Cookie(domain: "a.test", name: "v", value: "2")])
        #expect(fileAfterFlush == [v2])
        #expect(sentAfterFlush == ["v=2"])

        // Cleared, then flushed: the jar and the file should hold nothing.
        await session.clearCookies()
        #expect(await session.cookies().isEmpty)
        await session.flushCookies()
        let afterClear = Set(await session.cookies())
        let fileAfterClear = try Self.cookieLines(path)
        #expect(afterClear.isEmpty)
        #expect(fileAfterClear == [])
        await session.shutdown()
        // A new session over the same file starts from what was last written.
        let reopened = try CurlSession(configuration: Self.configuration(.file(path), ports: [server.port]))
        #expect(await reopened.cookies().isEmpty)
        await reopened.shutdown()
        try await server.shutdown()
    }
}
