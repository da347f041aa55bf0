// Curlew — what fuzzing URL composition found (Fuzz/Sources/FuzzURL; input kept as
// Fuzz/Corpus/FuzzURL/endpoint-combining): the process-wide cache of joined base URL + path pairs
// compared paths with `==`, which takes canonically equivalent texts as equal, so a path whose
// combining marks came in the other order (the same byte count) got the other path's escaped bytes.

import Curlew
import Foundation
import Testing

/// A target of `https://h.example/` and a path.
private struct PathTarget: TargetType {
    let path: String
    var baseURL: URL { URL(string: "https://h.example/")! }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}

@Suite struct URLFuzzFindingsTests {
    /// `a` + U+0301 + U+0323 and `a` + U+0323 + U+0301 are equal to Swift's `==` and differ in bytes:
    /// each path is escaped from its own bytes, whichever was joined first.
    @Test func canonicallyEquivalentPathsKeepTheirOwnBytes() {
        let acuteFirst = PathTarget(path: "a\u{301}\u{323}")
        let dotFirst = PathTarget(path: "a\u{323}\u{301}")
        #expect(acuteFirst.path == dotFirst.path)
        #expect(Endpoint.defaultURL(for: acuteFirst) == "https://h.example/a%CC%81%CC%A3")
        #expect(Array(Endpoint.defaultURL(for: dotFirst).utf8) == Array("https://h.example/a%CC%A3%CC%81".utf8))
        #expect(Array(Endpoint.defaultURL(for: acuteFirst).utf8) == Array("https://h.example/a%CC%81%CC%A3".utf8))
    }

    /// `é` as one scalar and as `e` + U+0301 (different byte counts) never shared an entry; kept as a check.
    @Test func composedAndDecomposedPathsKeepTheirOwnBytes() {
        #expect(Array(Endpoint.defaultURL(for: PathTarget(path: "caf\u{e9}")).utf8) == Array("https://h.example/caf%C3%A9".utf8))
        #expect(
            Array(Endpoint.defaultURL(for: PathTarget(path: "cafe\u{301}")).utf8)
                == Array("https://h.example/cafe%CC%81".utf8))
    }
}
