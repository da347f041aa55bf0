// FuzzURL, part 3: a `Location` resolved against the request URL, and the redirect rules applied to it.

import CCurl
import FuzzSupport
import HTTPTypes

@testable import CurlewEngine

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The statuses, methods and request fields the options byte picks from.
private let statuses = [301, 302, 303, 307, 308, 300, 304, 302]
private let methods: [HTTPRequest.Method] = [.get, .post, .head, .put]

/// Fields a request carries into the rules: credentials, a custom key, and what is allowed across origins
/// (one of them marked sensitive, which keeps it from crossing).
private let requestFields: HTTPFields = {
    var fields = HTTPFields()
    fields.append(HTTPField(name: .authorization, value: "Bearer secret"))
    fields.append(HTTPField(name: .cookie, value: "session=1"))
    fields.append(HTTPField(name: .proxyAuthorization, value: "Basic cHJveHk="))
    if let apiKey = HTTPField.Name("X-Api-Key") { fields.append(HTTPField(name: apiKey, value: "key")) }
    fields.append(HTTPField(name: .accept, value: "*/*"))
    var language = HTTPField(name: .acceptLanguage, value: "en")
    language.indexingStrategy = .disallow
    fields.append(language)
    fields.append(HTTPField(name: .userAgent, value: "fuzz"))
    fields.append(HTTPField(name: .range, value: "bytes=0-"))
    fields.append(HTTPField(name: .contentType, value: "text/plain"))
    return fields
}()

/// Scheme, host and port as RFC 6454 names an origin, read from libcurl's normalised URL text
/// (`scheme://[userinfo@]host[:port]/...`) by hand rather than through `PoolKey`.
private struct Origin: Equatable {
    let scheme: String
    let host: String
    let port: Int?

    init?(normalized url: String) {
        let bytes = Array(url.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: Array("://".utf8))
        else { return nil }
        scheme = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        let authorityStart = colon + 3
        let authorityEnd = bytes[authorityStart...].firstIndex { Array("/?#".utf8).contains($0) } ?? bytes.count
        var authority = bytes[authorityStart..<authorityEnd]
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) { authority = authority[(at + 1)...] }
        var hostPart = authority
        var portPart: ArraySlice<UInt8> = []
        if authority.first == UInt8(ascii: "["), let close = authority.firstIndex(of: UInt8(ascii: "]")) {
            hostPart = authority[...close]
            portPart = authority[(close + 1)...]
        } else if let portColon = authority.lastIndex(of: UInt8(ascii: ":")) {
            hostPart = authority[..<portColon]
            portPart = authority[portColon...]
        }
        host = String(decoding: hostPart, as: UTF8.self).lowercased()
        if portPart.first == UInt8(ascii: ":"), portPart.count > 1 {
            port = Int(String(decoding: portPart.dropFirst(), as: UTF8.self))
        } else {
            port = scheme == "http" ? 80 : scheme == "https" ? 443 : nil
        }
    }
}

/// The target a redirect URL leads to, as the walk reads it (`CurlSession.parse`: the session's cache).
private func target(_ url: String?, _ cache: ParsedURLCache) -> (url: String, key: PoolKey)? {
    guard let url, case .success(let parsed) = cache.parsed(url) else { return nil }
    // The cache hands back what parsing gives: never another URL's handle.
    if case .success(let fresh) = ParsedURL.parse(url) {
        let cached = parsed.normalized.map { String(cString: $0) }
        let direct = fresh.normalized.map { String(cString: $0) }
        expect(
            Bytes.same(cached, direct),
            "the URL cache gave \(Bytes.show(cached)) for \(Bytes.show(url)), which parses as \(Bytes.show(direct))")
    }
    return (url, parsed.poolKey)
}

/// HTTP's field values never start or end with spaces or tabs: what both ways of resolving see.
private func trimmed(_ text: String) -> String {
    var bytes = Array(text.utf8)[...]
    while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
    while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
    return String(decoding: bytes, as: UTF8.self)
}

/// `reference` resolved against `base` by the RFC, as libcurl then normalises it; nil when it refuses it.
private func rfcResolved(_ reference: URIReference, _ base: URIReference) -> String? {
    CurlURL(
        String(decoding: reference.resolved(against: base).text, as: UTF8.self),
        flags: UInt32(CURLU_NON_SUPPORT_SCHEME))?.url
}

/// What a walk does with the redirect: the URL it follows, or nil when it refuses (or stops).
private func followed(_ target: (url: String, key: PoolKey)?) -> String? {
    guard let target, target.key.scheme == "http" || target.key.scheme == "https" else { return nil }
    return target.url
}

/// Part 3. Input: base URL, `Location` (NUL-separated). Options: status (bits 0-2), method (3-4),
/// https to http allowed (5), redirects not followed (6), a body (7).
func fuzzRedirect(options: UInt8, _ input: inout Input) {
    let base = input.field()
    let location = trimmed(input.field())
    let cache = ParsedURLCache(capacity: 4)
    // A redirect answers a request libcurl sent: to a URL it parsed.
    guard let baseParsed = CurlURL(base), case .success(let origin) = cache.parsed(base) else {
        expect(
            ParsedURL.resolve(location, against: base) == nil,
            "resolved \(Bytes.show(location)) against \(Bytes.show(base)), which libcurl refuses")
        return
    }

    // Streamed and buffered responses both resolve the Location with `ParsedURL.resolve`; libcurl's own
    // resolution (CURLINFO_REDIRECT_URL, lib/transfer.c FOLLOW_FAKE) is kept for the dump only.
    let streamed = ParsedURL.resolve(location, against: base)
    let libcurl = CurlURL.resolvedAsLibcurlReports(location, against: base)
    let streamedTarget = target(streamed, cache)

    // RFC 3986 §5.2 on libcurl's normalised base, libcurl normalising the result.
    var rfc: String?
    var quirk: String?
    if let rfcBase = URIReference(Array(baseParsed.url.utf8)) {
        var reference = ParsedURL.isEmptyReference(location) ? [] : Array(location.utf8)
        if let parsed = URIReference(reference), parsed.scheme == nil { reference = libcurlEncodedRelative(reference) }
        if let parsed = URIReference(reference) {
            rfc = rfcResolved(parsed, rfcBase)
            quirk = libcurlQuirk(base: rfcBase, reference: parsed)
        }
    }
    let curlewFollows = followed(streamedTarget)
    let rfcFollows = followed(target(rfc, cache))
    let message = {
        "\(quirk ?? "") \(Bytes.show(location)) against \(Bytes.show(base)): Curlew follows \(Bytes.show(curlewFollows)), RFC 3986 \(Bytes.show(rfcFollows))"
    }
    switch quirk {
    case "scheme without authority", "long scheme":
        break  // Nothing to compare: the rules below still apply to the URL followed.
    case "empty path segments":
        // libcurl merges paths and removes dot segments around empty segments its own way (losing some,
        // keeping others): all but the path agree.
        let curlewParts = curlewFollows.flatMap { URIReference(Array($0.utf8)) }
        let rfcParts = rfcFollows.flatMap { URIReference(Array($0.utf8)) }
        expect((curlewParts == nil) == (rfcParts == nil), message())
        if let curlewParts, let rfcParts {
            expect(
                curlewParts.scheme == rfcParts.scheme && curlewParts.authority == rfcParts.authority
                    && curlewParts.query == rfcParts.query && curlewParts.fragment == rfcParts.fragment,
                message())
        }
    default:
        expect(Bytes.same(rawNonASCII(curlewFollows), rawNonASCII(rfcFollows)), message())
    }
    Dump.redirect(base: base, location: location, curlew: streamed, follows: curlewFollows, libcurl: libcurl, rfc: rfc)

    checkRules(options: options, base: base, baseNormalized: baseParsed.url, origin: origin.poolKey, target: streamedTarget)
}

/// `RedirectRules.decide` against the documented rules (RedirectPolicy's documentation), transcribed.
private func checkRules(
    options: UInt8, base: String, baseNormalized: String, origin: PoolKey, target: (url: String, key: PoolKey)?
) {
    let status = statuses[Int(options & 7)]
    let method = methods[Int(options >> 3 & 3)]
    let allowsHTTPSToHTTP = options & 0x20 != 0
    let policy: RedirectPolicy =
        options & 0x40 != 0 ? .doNotFollow : .follow(maxRedirects: 10, allowsHTTPSToHTTP: allowsHTTPSToHTTP)
    let request = TransportRequest(
        url: base, method: method, headerFields: requestFields,
        body: options & 0x80 != 0 ? .data(Data("body".utf8)) : nil)
    let decision = RedirectRules.decide(
        request: request, origin: origin, status: status, hasLocation: true, target: target, policy: policy,
        hopsSoFar: 0, visited: ["\(method.rawValue) \(base)"])
    let context = "\(status) \(method.rawValue) \(Bytes.show(base)) -> \(Bytes.show(target?.url))"

    guard [301, 302, 303, 307, 308].contains(status) else {
        guard case .returnResponse = decision else { expectationFailed("\(decision) for \(context)") }
        return
    }
    guard let target else {
        guard case .fail(.redirectRefused, _) = decision else { expectationFailed("unparsable: \(decision) for \(context)") }
        return
    }
    guard options & 0x40 == 0 else {
        guard case .returnResponse = decision else { expectationFailed("not following: \(decision) for \(context)") }
        return
    }
    guard let from = Origin(normalized: baseNormalized), let to = Origin(normalized: target.url) else {
        expectationFailed("no origin in \(Bytes.show(baseNormalized)) or \(Bytes.show(target.url))")
    }
    guard to.scheme == "http" || to.scheme == "https" else {
        guard case .fail(.redirectRefused, _) = decision else { expectationFailed("scheme: \(decision) for \(context)") }
        return
    }
    if from.scheme == "https", to.scheme == "http", !allowsHTTPSToHTTP {
        guard case .fail(.redirectRefused, _) = decision else { expectationFailed("downgrade: \(decision) for \(context)") }
        return
    }
    let leavesOrigin = from != to
    let rewrites = (status == 303 && method != .head) || ((status == 301 || status == 302) && method == .post)
    let nextMethod: HTTPRequest.Method = rewrites ? .get : method
    let sendsBody = !rewrites && request.body != nil
    let loops = Array("\(nextMethod.rawValue) \(target.url)".utf8) == Array("\(method.rawValue) \(base)".utf8)
    if loops {
        guard case .fail(.tooManyRedirects, _) = decision else { expectationFailed("loop: \(decision) for \(context)") }
        return
    }
    guard case .follow(let next, let reportedLeaving) = decision else {
        expectationFailed("\(decision) for \(context), origin \(from) -> \(to)")
    }
    expect(reportedLeaving == leavesOrigin, "leaves origin \(reportedLeaving), \(from) -> \(to) for \(context)")
    expect(Bytes.same(next.url, target.url) && next.method == nextMethod, "next \(next.method) \(next.url) for \(context)")
    expect((next.body != nil) == sendsBody, "body \(next.body != nil) for \(context)")
    let bodyFields: Set<HTTPField.Name> = [
        .contentType, .contentLength, .contentEncoding, .contentLanguage, .contentLocation, .expect, .transferEncoding,
    ]
    let crossing: Set<HTTPField.Name> = [.accept, .acceptLanguage, .acceptEncoding, .userAgent, .range, .ifRange]
    let kept = requestFields.filter { field in
        if rewrites && bodyFields.contains(field.name) { return false }
        if !leavesOrigin { return true }
        return field.indexingStrategy != .disallow
            && (crossing.contains(field.name) || (sendsBody && field.name == .contentType))
    }
    expect(
        Array(next.headerFields) == Array(kept),
        "fields \(next.headerFields.map(\.name.rawName)), expected \(kept.map(\.name.rawName)) for \(context), leaving \(leavesOrigin)")
}
