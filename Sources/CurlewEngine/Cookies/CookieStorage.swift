// Curlew — where a session keeps cookies, if anywhere.

/// Whether a session keeps cookies, and where.
///
/// Off by default: a server-side client usually acts for many users, and one jar shared by all of their
/// requests would mix their sessions. Turn it on for a client that is one user of an API (a scraper, a
/// service account behind a login). The jar follows the cookie rules (domain, path, `Secure`, expiry);
/// a request can opt out with ``TransferOptions/handlesCookies``.
public enum CookieStorage: Sendable, Hashable {
    /// No jar: `Set-Cookie` is ignored and no `Cookie` is added. The default.
    case disabled
    /// A jar in memory, for the session's life.
    case inMemory
    /// A jar loaded from this file (Netscape cookie-file format) when the session starts, and written
    /// back by ``CurlSession/flushCookies()`` and when the session shuts down.
    case file(String)

    var isEnabled: Bool { self != .disabled }
}
