// Curlew — what fuzzing redirects found (Fuzz/Sources/FuzzURL, against an RFC 3986 transcription; inputs
// kept in Fuzz/Corpus/FuzzURL): libcurl's resolution of a `Location` (CURLINFO_REDIRECT_URL and
// curl_url_set on the request URL's handle) strays from RFC 3986 §5.2.2 for a fragment-only reference,
// any reference against a URL with a fragment, and a query after dot segments; the URL cache and the
// loop check compared URLs with `==`, which takes canonically equivalent texts (`é` and `e\u{301}`) as
// equal, so a request could go out with another URL's bytes, or a hop be taken for a loop.

@testable import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// A server that redirects `/x/a/b` (any query) to `location` and answers 200 elsewhere.
private func redirecting(to location: String) -> LocalHTTPServer.Handler {
    { request in
        request.path == "/x/a/b" ? .respond(status: 302, headers: [("Location", location)]) : .text("ok")
    }
}

@Suite struct URLFuzzFindingsTests {
    /// Each resolved as RFC 3986 §5.2.2 has it (libcurl 7.88's own answer in the comment).
    @Test(arguments: [
        // libcurl: http://h.example/a/#frag (the base's parent path; fixed in 8.8.0)
        ("#frag", "http://h.example/a/b?x#y", "http://h.example/a/b?x#frag"),
        // libcurl: http://h.example/a/
        ("#", "http://h.example/a/b?x#y", "http://h.example/a/b?x"),
        // libcurl: http://h.example/a/b#y?q (the query in the fragment; fixed in 8.12.0)
        ("?q", "http://h.example/a/b#y", "http://h.example/a/b?q"),
        // libcurl: http://h.example/a/b#x/c (the base's fragment taken for its path)
        ("c", "http://h.example/a/b#x/y", "http://h.example/a/c"),
        // libcurl: http://h.example/x/a?q and http://h.example/x?q (the path's last `/` lost)
        ("./?q", "http://h.example/x/a/b", "http://h.example/x/a/?q"),
        ("../?q", "http://h.example/x/a/b", "http://h.example/x/?q"),
        ("../#f", "http://h.example/x/a/b#y", "http://h.example/x/#f"),
        // Unchanged: libcurl's answers, escapes as given (upper-case hex kept), spaces escaped its way.
        ("", "http://h.example/a/b?x#y", "http://h.example/a/b?x"),
        ("../c?x=1", "http://h.example/a/b", "http://h.example/c?x=1"),
        ("c?d#%3F", "http://h.example/x/a/b", "http://h.example/x/a/c?d#%3F"),
        ("c d?e f#g h", "http://h.example/a/b", "http://h.example/a/c%20d?e+f#g+h"),
        ("//o.example/p?q", "http://h.example/a/b#y", "http://o.example/p?q"),
        ("https://o.example/p#f", "http://h.example/a/b", "https://o.example/p#f"),
        ("http://[fe80::1%25eth0]:8080/c", "http://h.example/a", "http://[fe80::1%25eth0]:8080/c"),
        ("?q", "http://[::1e80:21%25eth0]:8080/b", "http://[::1e80:21%25eth0]:8080/b?q"),
    ])
    func locationsResolveByRFC3986(reference: String, base: String, resolved: String) {
        #expect(ParsedURL.resolve(reference, against: base).map { Array($0.utf8) } == Array(resolved.utf8))
    }

    @Test func anUnparsableLocationOrBaseResolvesToNothing() {
        #expect(ParsedURL.resolve("http://h.example/a b", against: "http://h.example/") == nil)
        #expect(ParsedURL.resolve("#f", against: "//h.example/a") == nil)
        // A control character in a fragment: refused by libcurl 7.88, escaped by libcurl 8.14.
        let control = ParsedURL.resolve("#f\u{1}", against: "http://h.example/a")
        #expect(control == nil || control == "http://h.example/a#f%01")
    }

    /// A buffered and a streamed response report the same resolved `Location`.
    @Test(arguments: [false, true])
    func bothWaysReportTheRFCsLocation(streamed: Bool) async throws {
        for (location, resolved) in [("./?q=1", "/x/a/?q=1"), ("#frag", "/x/a/b#frag"), ("?q=2", "/x/a/b?q=2")] {
            try await withServerAndSession(handler: redirecting(to: location)) { server, session in
                var request = TransportRequest(url: server.url("/x/a/b#top"))
                request.redirectPolicy = .doNotFollow
                let reported: String?
                if streamed {
                    reported = try await session.perform(request) { head, _ in head.redirectURL }
                } else {
                    reported = try await session.execute(request).redirectURL
                }
                #expect(reported == server.url(resolved))
            }
        }
    }

    @Test func aQueryAfterDotSegmentsIsFollowedWithTheSlash() async throws {
        try await withServerAndSession(handler: redirecting(to: "./?page=2")) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/x/a/b")))
            #expect(response.status == .ok)
            #expect(server.requests.map(\.uri) == ["/x/a/b", "/x/a/?page=2"])
        }
    }

    /// The cache hands back the URL it was asked for, byte for byte.
    @Test func theURLCacheKeepsCanonicallyEquivalentURLsApart() throws {
        let cache = ParsedURLCache(capacity: 4)
        let composed = "http://h.example/caf\u{e9}"
        let decomposed = "http://h.example/cafe\u{301}"
        #expect(composed == decomposed)
        for url in [composed, decomposed, composed, decomposed] {
            let parsed = try cache.parsed(url).get()
            let normalized = parsed.normalized.map { Array(String(cString: $0).utf8) }
            #expect(normalized == Array(url.utf8))
        }
        // Combining marks in either order: the same byte count.
        let marks = ["http://h.example/a\u{301}\u{323}", "http://h.example/a\u{323}\u{301}"]
        for url in marks + marks {
            let parsed = try cache.parsed(url).get()
            #expect(parsed.normalized.map { Array(String(cString: $0).utf8) } == Array(url.utf8))
        }
    }

    /// Link-local addresses in two zones are two hosts: a hop between them leaves the origin. (Input kept
    /// as Fuzz/Corpus/FuzzURL/redirect-zone.)
    @Test func anIPv6ZoneIsPartOfTheOrigin() throws {
        let eth0 = try ParsedURL.parse("http://[fe80::1%25eth0]:8080/a").get().poolKey
        let eth1 = try ParsedURL.parse("http://[fe80::1%25eth1]:8080/b").get().poolKey
        let none = try ParsedURL.parse("http://[fe80::1]:8080/b").get().poolKey
        #expect(eth0.host == "[fe80::1%25eth0]")
        #expect(none.host == "[fe80::1]")
        #expect(eth0 != eth1 && eth0 != none)
        #expect(eth0 == (try ParsedURL.parse("http://[FE80::1%25eth0]:8080/c").get().poolKey))
        var fields = HTTPFields()
        fields[.authorization] = "Bearer secret"
        let request = TransportRequest(url: "http://[fe80::1%25eth0]:8080/a", headerFields: fields)
        let decision = RedirectRules.decide(
            request: request, origin: eth0, status: 302, hasLocation: true,
            target: ("http://[fe80::1%25eth1]:8080/b", eth1), policy: .default, hopsSoFar: 0, visited: [String]())
        guard case .follow(let next, let leavesOrigin) = decision else {
            Issue.record("expected to follow, got \(decision)")
            return
        }
        #expect(leavesOrigin)
        #expect(next.headerFields[.authorization] == nil)
    }

    /// A hop from a URL to its canonically equivalent spelling is another request, not a loop; a hop back
    /// to the same bytes still is.
    @Test func aLoopIsTheSameBytes() {
        let composed = "http://h.example/caf\u{e9}"
        let decomposed = "http://h.example/cafe\u{301}"
        let origin = PoolKey(scheme: "http", host: "h.example", port: 80)
        let request = TransportRequest(url: composed)
        let next = RedirectRules.decide(
            request: request, origin: origin, status: 302, hasLocation: true, target: (decomposed, origin),
            policy: .default, hopsSoFar: 0, visited: ["GET \(composed)"])
        guard case .follow(let hop, let leavesOrigin) = next else {
            Issue.record("expected to follow, got \(next)")
            return
        }
        #expect(Array(hop.url.utf8) == Array(decomposed.utf8))
        #expect(!leavesOrigin)
        let back = RedirectRules.decide(
            request: request, origin: origin, status: 302, hasLocation: true, target: (composed, origin),
            policy: .default, hopsSoFar: 1, visited: ["GET \(composed)", "GET \(decomposed)"])
        guard case .fail(.tooManyRedirects, _) = back else {
            Issue.record("expected a loop, got \(back)")
            return
        }
    }
}
