// FuzzURL: where libcurl's resolution of a reference differs from RFC 3986 and Curlew keeps libcurl's
// answer, and how the oracle reads libcurl's lenience.

/// A reference without a scheme as libcurl 7.88 writes it before resolving (lib/urlapi.c `concat_url`,
/// `urlencode_str`): from the host separator on, a space is `%20` before the first `?` and `+` after it,
/// bytes from 0x80 are `%xx`. For a relative path the separator is the start; for a network path
/// (`//host/...`, written without its `//`) the first `/` or `?` after the host, which libcurl looks for
/// after the first `//` of what is left (`//h/a//b c`: after `b`'s `//`...). A lenience of libcurl's (RFC
/// 3986 has no spaces or raw non-ASCII in a reference), kept by the oracle.
func libcurlEncodedRelative(_ bytes: [UInt8]) -> [UInt8] {
    let networkPath = bytes.starts(with: Array("//".utf8))
    let text = networkPath ? Array(bytes.dropFirst(2)) : bytes
    var hostSeparator = 0
    if networkPath {
        var start = 0
        if let slashes = text.indices.first(where: { text[$0...].starts(with: Array("//".utf8)) }) { start = slashes + 2 }
        hostSeparator = text[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? text.count
    }
    var out: [UInt8] = networkPath ? Array("//".utf8) + text[..<hostSeparator] : []
    var left = true
    for byte in text[hostSeparator...] {
        if byte == 0x20 {
            out += left ? Array("%20".utf8) : Array("+".utf8)
        } else if byte >= 0x80 {
            out += Array("%\(String(byte, radix: 16, uppercase: false))".utf8)
        } else {
            if byte == UInt8(ascii: "?") { left = false }
            out.append(byte)
        }
    }
    return out
}

/// The differences between libcurl's resolution and RFC 3986 that Curlew keeps (it corrects the others,
/// see `ParsedURL.resolve`): the class, or nil.
func libcurlQuirk(base: URIReference, reference: URIReference) -> String? {
    let relativePath =
        reference.scheme == nil && reference.authority == nil && !reference.path.isEmpty
        && reference.path.first != UInt8(ascii: "/")
    // libcurl 7.88 merges a relative path by cutting the base's text at slashes, and loses empty segments
    // (`//`) the RFC's merge and dot-segment removal keep: `x` against `http://h//a` is `http://h/x`, not
    // `http://h//x`; `..//y` against `http://h/` is `http://h/y`, not `http://h//y`.
    let slashes = Array("//".utf8)
    if relativePath, base.path.starts(with: slashes) || reference.path.contains(slashes) {
        return "empty path segments"
    }
    // A scheme without `//` and a host (`http:/x`, `http:x`, `http:///x`): no http(s) URL by the RFC (no
    // authority, or an empty one); libcurl 7.88 reads one or three slashes as two (`http:/../x` and
    // `http:///../x` are host `..`), WHATWG takes `http:/x` for a path on the base's host when the schemes
    // match and skips extra slashes. Curlew follows libcurl's reading (what it cannot parse: refused).
    if reference.scheme != nil, reference.authority?.isEmpty ?? true { return "scheme without authority" }
    // The same with no scheme (`///x`): libcurl reads `https:///x` as above.
    if reference.authority?.isEmpty == true { return "scheme without authority" }
    // A scheme longer than libcurl's limit (MAX_SCHEME_LEN, 40): a relative path to libcurl, a URL of
    // another scheme (refused) to the RFC.
    if let scheme = reference.scheme, scheme.count > 40 { return "long scheme" }
    return nil
}

/// `url` with escapes of bytes from 0x80 (`%c3%a9`) as the raw bytes: libcurl escapes them in a relative
/// reference (`urlencode_str`) but not in an absolute one, nor after a second `//` in a network-path one
/// (`//h/x//é`); the same bytes reach the server either way, once it decodes the path.
func rawNonASCII(_ url: String?) -> String? {
    guard let url else { return nil }
    let bytes = Array(url.utf8)
    var out: [UInt8] = []
    var index = 0
    while index < bytes.count {
        if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, Bytes.isHex(bytes[index + 1]),
            Bytes.isHex(bytes[index + 2]), Bytes.hexValue(bytes[index + 1]) >= 8
        {
            out.append(Bytes.hexValue(bytes[index + 1]) << 4 | Bytes.hexValue(bytes[index + 2]))
            index += 3
        } else {
            out.append(bytes[index])
            index += 1
        }
    }
    return String(decoding: out, as: UTF8.self)
}
