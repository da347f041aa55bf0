// Curlew — URLs as logs, metrics and spans may show them: no user information, no query values.

/// A URL with nothing secret in it, as OpenTelemetry's `url.full` asks: the user information removed and
/// every query value replaced by `REDACTED` (the names kept); the fragment dropped.
package enum RedactedURL {
    static let redacted = "REDACTED"

    /// `url` redacted; a string that is not an absolute URL comes back with its query and fragment
    /// dropped.
    package static func full(_ url: String) -> String {
        var rest = Substring(url)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        var query: Substring?
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var result = ""
        result.reserveCapacity(url.utf8.count)
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") {
            let authorityStart = rest.index(colon, offsetBy: 3)
            result += rest[..<authorityStart]
            var authorityAndPath = rest[authorityStart...]
            let authorityEnd = authorityAndPath.firstIndex(of: "/") ?? authorityAndPath.endIndex
            // The last `@` in the authority ends the user information (a password may hold `@`).
            if let at = authorityAndPath[..<authorityEnd].lastIndex(of: "@") {
                authorityAndPath = authorityAndPath[authorityAndPath.index(after: at)...]
            }
            result += authorityAndPath
        } else {
            result += rest
        }
        guard let query else { return result }
        result += "?"
        var first = true
        for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
            if !first { result += "&" }
            first = false
            if let equals = pair.firstIndex(of: "=") {
                result += pair[..<equals]
                result += "="
                result += redacted
            } else {
                result += pair
            }
        }
        return result
    }

    /// The host and port of an absolute URL (the scheme's default port when none is given); empty and 0
    /// when it has none.
    package static func server(_ url: String) -> (host: String, port: Int) {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return ("", 0) }
        let scheme = url[..<colon].lowercased()
        var authority = url[url.index(colon, offsetBy: 3)...]
        if let end = authority.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { authority = authority[..<end] }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let defaultPort = scheme == "https" ? 443 : 80
        // An IPv6 literal keeps its brackets' colons.
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            let host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            return (host.lowercased(), rest.hasPrefix(":") ? Int(rest.dropFirst()) ?? defaultPort : defaultPort)
        }
        if let portColon = authority.lastIndex(of: ":") {
            return (authority[..<portColon].lowercased(), Int(authority[authority.index(after: portColon)...]) ?? defaultPort)
        }
        return (authority.lowercased(), defaultPort)
    }
}
