// Curlew — one cookie of a session's jar.

extension CurlSession {
    /// A cookie in a session's jar, as libcurl's cookie engine keeps it.
    public struct Cookie: Sendable, Hashable {
        /// The domain (without a leading dot).
        public var domain: String
        /// Whether subdomains of ``domain`` receive it too (a `Domain` attribute was given).
        public var includesSubdomains: Bool
        /// The path it applies to.
        public var path: String
        /// Sent over https only.
        public var secure: Bool
        /// Hidden from scripts (`HttpOnly`); kept for completeness.
        public var httpOnly: Bool
        /// When it expires, in seconds since 1970; nil for a session cookie.
        public var expires: Int?
        /// The name.
        public var name: String
        /// The value.
        public var value: String

        /// Creates a cookie.
        public init(
            domain: String, includesSubdomains: Bool = false, path: String = "/", secure: Bool = false,
            httpOnly: Bool = false, expires: Int? = nil, name: String, value: String
        ) {
            self.domain = domain
            self.includesSubdomains = includesSubdomains
            self.path = path
            self.secure = secure
            self.httpOnly = httpOnly
            self.expires = expires
            self.name = name
            self.value = value
        }

        /// Whether it has expired at `now` (seconds since 1970), the test libcurl applies before sending it.
        func hasExpired(at now: Int) -> Bool {
            guard let expires else { return false }
            return expires < now
        }

        /// Parses a line of libcurl's cookie list (the Netscape cookie-file format).
        init?(netscapeLine line: String) {
            var text = Substring(line)
            var httpOnly = false
            if text.hasPrefix("#HttpOnly_") {
                httpOnly = true
                text = text.dropFirst("#HttpOnly_".count)
            }
            let fields = text.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 7, let expires = Int(fields[4]) else { return nil }
            var domain = String(fields[0])
            if domain.hasPrefix(".") { domain.removeFirst() }
            self.init(
                domain: domain, includesSubdomains: fields[1] == "TRUE", path: String(fields[2]), secure: fields[3] == "TRUE",
                httpOnly: httpOnly, expires: expires == 0 ? nil : expires, name: String(fields[5]),
                value: fields[6...].joined(separator: "\t"))
        }

        /// The line libcurl's cookie list takes (the Netscape cookie-file format).
        var netscapeLine: String {
            let host = includesSubdomains ? "." + domain : domain
            return [
                (httpOnly ? "#HttpOnly_" : "") + host, includesSubdomains ? "TRUE" : "FALSE", path, secure ? "TRUE" : "FALSE",
                String(expires ?? 0), name, value,
            ].joined(separator: "\t")
        }
    }
}
