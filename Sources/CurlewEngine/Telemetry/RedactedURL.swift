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
}
