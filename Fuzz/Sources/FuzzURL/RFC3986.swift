// An independent transcription of RFC 3986 §5.2 (reference resolution), the oracle for `Location`.

/// A URI reference split by RFC 3986 Appendix B; nil components are undefined (not empty).
struct URIReference {
    var scheme: [UInt8]?
    var authority: [UInt8]?
    var path: [UInt8]
    var query: [UInt8]?
    var fragment: [UInt8]?

    /// `text` split. The text before a first `:` (before any `/`, `?`, `#`) is the scheme when it is one
    /// (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`). Otherwise RFC 3986 §4.2 makes the reference
    /// invalid (no colon in a relative reference's first segment); read leniently, as libcurl and WHATWG
    /// do, it is a relative path (`c d:/x`), except that nil is returned when libcurl takes the text for a
    /// scheme of its own (`1http://x`: up to 40 letters, digits, `+`, `-`, `.`), which the engine then
    /// refuses.
    /// A control character (no URI holds one, and libcurl does not escape them) makes nil too.
    init?(_ text: [UInt8]) {
        guard !text.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        var rest = text[...]
        if let colon = rest.firstIndex(where: { Array(":/?#".utf8).contains($0) }), rest[colon] == UInt8(ascii: ":") {
            let name = rest[..<colon]
            let schemeByte = { (byte: UInt8) in
                Self.isAlpha(byte) || (0x30...0x39).contains(byte) || Array("+-.".utf8).contains(byte)
            }
            if let first = name.first, Self.isAlpha(first), name.allSatisfy(schemeByte) {
                scheme = Array(name)
                rest = rest[(colon + 1)...]
            } else if !name.isEmpty, name.count <= 40, name.allSatisfy(schemeByte) {
                return nil
            }
        }
        if rest.starts(with: Array("//".utf8)) {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex { Array("/?#".utf8).contains($0) } ?? rest.endIndex
            authority = Array(rest[..<end])
            rest = rest[end...]
        }
        let pathEnd = rest.firstIndex { Array("?#".utf8).contains($0) } ?? rest.endIndex
        path = Array(rest[..<pathEnd])
        rest = rest[pathEnd...]
        if rest.first == UInt8(ascii: "?") {
            let end = rest.firstIndex(of: UInt8(ascii: "#")) ?? rest.endIndex
            query = Array(rest[rest.index(after: rest.startIndex)..<end])
            rest = rest[end...]
        }
        if rest.first == UInt8(ascii: "#") { fragment = Array(rest.dropFirst()) }
    }

    private init(scheme: [UInt8]?, authority: [UInt8]?, path: [UInt8], query: [UInt8]?, fragment: [UInt8]?) {
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    private static func isAlpha(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// RFC 3986 §5.2.2 (strict), with §5.2.3 merge and §5.2.4 dot-segment removal.
    func resolved(against base: URIReference) -> URIReference {
        if scheme != nil {
            return URIReference(
                scheme: scheme, authority: authority, path: removingDotSegments(path), query: query, fragment: fragment)
        }
        if authority != nil {
            return URIReference(
                scheme: base.scheme, authority: authority, path: removingDotSegments(path), query: query,
                fragment: fragment)
        }
        if path.isEmpty {
            return URIReference(
                scheme: base.scheme, authority: base.authority, path: base.path, query: query ?? base.query,
                fragment: fragment)
        }
        let merged: [UInt8]
        if path.first == UInt8(ascii: "/") {
            merged = path
        } else if base.authority != nil && base.path.isEmpty {
            merged = Array("/".utf8) + path
        } else {
            let slash = base.path.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
            merged = Array(base.path[..<slash]) + path
        }
        return URIReference(
            scheme: base.scheme, authority: base.authority, path: removingDotSegments(merged), query: query,
            fragment: fragment)
    }

    /// RFC 3986 §5.3.
    var text: [UInt8] {
        var out: [UInt8] = []
        if let scheme { out += scheme + Array(":".utf8) }
        if let authority { out += Array("//".utf8) + authority }
        out += path
        if let query { out += Array("?".utf8) + query }
        if let fragment { out += Array("#".utf8) + fragment }
        return out
    }
}
