// FuzzURL, part 2: a target's base URL + path + query parameters, as an endpoint composes them, and
// the URL libcurl then parses.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FuzzSupport

@testable import Curlew

private struct FuzzedTarget: TargetType {
    let baseURL: URL
    let path: String
    let method: HTTPRequest.Method
    let task: RequestTask
    let headers: [String: String]? = nil
}

/// The base URL when the input's is not one Foundation takes.
private let fallbackBase = URL(string: "https://api.example.com/v1?key=1#top")

/// `path` as `defaultURL` documents it: bytes a path may hold (RFC 3986 `pchar` and `/`) and `%XX`
/// escapes kept, every other byte `%XX` (upper-case hex).
private func escapedPath(_ path: String) -> [UInt8] {
    let bytes = Array(path.utf8)
    var out: [UInt8] = []
    var index = 0
    while index < bytes.count {
        let byte = bytes[index]
        let keep =
            Bytes.isUnreserved(byte) || Array("!$&'()*+,;=:@/".utf8).contains(byte)
            || (byte == UInt8(ascii: "%") && index + 2 < bytes.count && Bytes.isHex(bytes[index + 1])
                && Bytes.isHex(bytes[index + 2]))
        if keep {
            out.append(byte)
        } else {
            out += Array("%\(byte < 16 ? "0" : "")\(String(byte, radix: 16, uppercase: true))".utf8)
        }
        index += 1
    }
    return out
}

/// `base` up to its first `?` or `#`, exactly one `/`, the escaped path, then the rest of `base`.
private func joined(_ base: String, _ path: String) -> (head: [UInt8], tail: [UInt8]) {
    let bytes = Array(base.utf8)
    guard !path.isEmpty else {
        let split = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.count
        return (Array(bytes[..<split]), Array(bytes[split...]))
    }
    let split = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.count
    var head = Array(bytes[..<split])
    var escaped = escapedPath(path)
    let headSlash = head.last == UInt8(ascii: "/")
    let pathSlash = escaped.first == UInt8(ascii: "/")
    if headSlash && pathSlash { escaped.removeFirst() }
    if !headSlash && !pathSlash { head.append(UInt8(ascii: "/")) }
    return (head + escaped, Array(bytes[split...]))
}

/// Whether `urlRequest()` documents accepting `url`: `http://` or `https://` (any case), a host
/// position not starting with `/`, `?` or `#`, and no byte up to space or DEL.
private func isSendable(_ url: String) -> Bool {
    let bytes = Array(url.utf8)
    let lower = bytes.prefix(8).map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
    let hostStart: Int
    if lower.starts(with: Array("https://".utf8)) {
        hostStart = 8
    } else if lower.starts(with: Array("http://".utf8)) {
        hostStart = 7
    } else {
        return false
    }
    guard hostStart < bytes.count, !Array("/?#".utf8).contains(bytes[hostStart]) else { return false }
    return !bytes.contains { $0 <= 0x20 || $0 == 0x7F }
}

/// RFC 3986 §5.2.4 on a path.
func removingDotSegments(_ path: [UInt8]) -> [UInt8] {
    var input = path[...]
    var output: [UInt8] = []
    func starts(_ prefix: String) -> Bool { input.starts(with: prefix.utf8) }
    func dropLastSegment() {
        if let slash = output.lastIndex(of: UInt8(ascii: "/")) {
            output.removeSubrange(slash...)
        } else {
            output.removeAll()
        }
    }
    while !input.isEmpty {
        if starts("../") {
            input = input.dropFirst(3)
        } else if starts("./") {
            input = input.dropFirst(2)
        } else if starts("/./") {
            input = input.dropFirst(2)
        } else if Array(input) == Array("/.".utf8) {
            input = Array("/".utf8)[...]
        } else if starts("/../") {
            input = input.dropFirst(3)
            dropLastSegment()
        } else if Array(input) == Array("/..".utf8) {
            input = Array("/".utf8)[...]
            dropLastSegment()
        } else if Array(input) == Array(".".utf8) || Array(input) == Array("..".utf8) {
            input = []
        } else {
            let start = input.startIndex
            let from = input.first == UInt8(ascii: "/") ? start + 1 : start
            let end = input[from...].firstIndex(of: UInt8(ascii: "/")) ?? input.endIndex
            output += input[start..<end]
            input = input[end...]
        }
    }
    return output
}

/// Part 2. Input: base URL, path A, path B (NUL-separated), then the query parameters.
func fuzzEndpoint(options: UInt8, _ input: inout Input) {
    let baseText = input.field()
    let pathA = input.field()
    let pathB = input.field()
    let parameters = input.parameters()
    guard let baseURL = URL(string: baseText) ?? fallbackBase else { return }
    let base = baseURL.absoluteString
    let getInQuery = options & 8 != 0
    let encoding = urlEncoding(options, destination: getInQuery ? .methodDependent : .queryString)
    let method: HTTPRequest.Method = getInQuery ? .get : .post

    // The joined URL, for both paths and A again: the process-wide cache of joined pairs must give each
    // pair its own join (it is keyed on the texts).
    for path in [pathA, pathB, pathA] {
        let target = FuzzedTarget(baseURL: baseURL, path: path, method: method, task: .requestPlain)
        let (head, tail) = joined(base, path)
        let url = Endpoint.defaultURL(for: target)
        expect(
            Array(url.utf8) == head + tail,
            "\(Bytes.show(base)) + \(Bytes.show(path)) joined as \(Bytes.show(url)), expected \(Bytes.show(String(decoding: head + tail, as: UTF8.self)))")
    }

    let target = FuzzedTarget(
        baseURL: baseURL, path: pathA, method: method,
        task: .requestParameters(parameters: parameters, encoding: encoding))
    let (head, tail) = joined(base, pathA)
    let pairs = expectedPairs(parameters, encoding)
    let request: TransportRequest
    do {
        request = try Endpoint.default(for: target).urlRequest()
    } catch {
        guard case .requestMapping = error else { expectationFailed("unexpected \(error) for \(Bytes.show(base))") }
        expect(
            !isSendable(String(decoding: head + tail, as: UTF8.self)),
            "refused a sendable URL: \(error) for \(Bytes.show(base)) + \(Bytes.show(pathA))")
        return
    }
    let composed = String(decoding: head + tail, as: UTF8.self)
    expect(isSendable(composed), "accepted \(Bytes.show(request.url)), which urlRequest() documents refusing")

    // The query, appended before any fragment: `?` or `&` as needed.
    let hash = tail.firstIndex(of: UInt8(ascii: "#")) ?? tail.count
    let baseQuery = Array(tail[..<hash])
    let fragment = Array(tail[hash...])
    let query = encoding.query(parameters)
    checkQuery(query, pairs, "endpoint query")
    var expectedQuery = baseQuery
    if !query.isEmpty {
        if baseQuery.isEmpty {
            expectedQuery = Array("?".utf8)
        } else if baseQuery != Array("?".utf8), baseQuery.last != UInt8(ascii: "&") {
            expectedQuery.append(UInt8(ascii: "&"))
        }
        expectedQuery += Array(query.utf8)
    }
    let expected = head + expectedQuery + fragment
    expect(
        Array(request.url.utf8) == expected,
        "request URL \(Bytes.show(request.url)), expected \(Bytes.show(String(decoding: expected, as: UTF8.self)))")

    // libcurl reads what Curlew meant: the escaped path (dot segments removed, RFC 3986 §5.2.4, which
    // libcurl applies to every URL: a `..` in a target's path climbs out of the base URL's path), the
    // query, the base's fragment. A `?` or `#` of the path is escaped, never a delimiter. Only a base URL
    // libcurl itself refuses may make the composed URL refused.
    guard let parsed = CurlURL(request.url) else {
        expect(CurlURL(base) == nil, "libcurl refuses \(Bytes.show(request.url)), not its base \(Bytes.show(base))")
        return
    }
    let afterScheme = head.firstIndex(of: UInt8(ascii: ":")).map { $0 + 3 } ?? 0
    let pathStart = head[afterScheme...].firstIndex(of: UInt8(ascii: "/")) ?? head.count
    let pathText = head[pathStart...].isEmpty ? Array("/".utf8) : Array(head[pathStart...])
    let wantedPath = removingDotSegments(pathText)
    expect(
        parsed.path.map { Array($0.utf8) } == wantedPath,
        "libcurl's path \(Bytes.show(parsed.path)) for \(Bytes.show(request.url)), expected \(Bytes.show(String(decoding: wantedPath, as: UTF8.self)))")
    // An empty query (a bare `?`) or fragment is no query or fragment (libcurl reports either way).
    let wantedQuery = String(decoding: expectedQuery.dropFirst(), as: UTF8.self)
    expect(
        Bytes.same(parsed.query ?? "", wantedQuery),
        "libcurl's query \(Bytes.show(parsed.query)) for \(Bytes.show(request.url)), expected \(Bytes.show(wantedQuery))")
    let wantedFragment = String(decoding: fragment.dropFirst(), as: UTF8.self)
    expect(
        Bytes.same(parsed.fragment ?? "", wantedFragment),
        "libcurl's fragment \(Bytes.show(parsed.fragment)) for \(Bytes.show(request.url)), expected \(Bytes.show(wantedFragment))")
}
