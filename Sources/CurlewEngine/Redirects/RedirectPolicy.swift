// Curlew — which redirects the engine follows.

/// Which redirects are followed, how many, and who decides.
///
/// The engine follows 301, 302, 303, 307 and 308 responses that carry a `Location` (a 300 or 304 is
/// returned as it is). 301 and 302 turn a POST into a GET, 303 turns every method but HEAD into a GET;
/// such a rewrite drops the body and its fields (`Content-Type`, `Content-Length`, `Content-Encoding`,
/// `Content-Language`, `Content-Location`, `Expect`). 307 and 308 keep the method and send the body
/// again, which needs a body that can be replayed.
///
/// When a hop leaves the origin (scheme, host or port differ), the caller's credentials stay behind:
/// only `Accept`, `Accept-Language`, `Accept-Encoding`, `User-Agent`, `Range`, `If-Range` (and `Content-Type` when the
/// body is sent again) follow; `Authorization`, `Cookie`, `Proxy-Authorization`, API keys and every
/// other field set by a target, an endpoint or a plugin are dropped, as are fields marked sensitive
/// (`HTTPField.indexingStrategy == .disallow`). Within one origin all fields follow.
///
/// Refused with ``TransportError/Code/redirectRefused`` (the error carries the location): a hop from
/// https to http unless allowed, a scheme other than http or https, and a `Location` that cannot be
/// parsed (even when redirects are not followed). A loop (a hop back to a method and URL already
/// visited; with a cookie jar such a bounce may be legitimate and only the hop count applies) or more
/// than ``maxRedirects`` hops fails with ``TransportError/Code/tooManyRedirects``. With a cookie jar, a
/// `Set-Cookie` on a redirect is stored before the next hop, and the jar decides per hop which cookies
/// it sends, by the cookie rules.
/// One total timeout spans all hops.
public struct RedirectPolicy: Sendable {
    /// What to do with one redirect, as a ``custom(maxRedirects:allowsHTTPSToHTTP:_:)`` closure decides.
    public enum Action: Sendable, Hashable {
        /// Send the next request.
        case follow
        /// Stop and return the 3xx response as the response.
        case stop
        /// Fail with ``TransportError/Code/redirectRefused``.
        case refuse
    }

    enum Mode: Sendable {
        case follow
        case doNotFollow
        case custom(@Sendable (RedirectHop) async -> Action)
    }

    // One reference wide: every request carries an optional policy, so copies stay cheap.
    private final class Storage: Sendable {
        let mode: Mode
        let maxRedirects: Int
        let allowsHTTPSToHTTP: Bool

        init(mode: Mode, maxRedirects: Int, allowsHTTPSToHTTP: Bool) {
            self.mode = mode
            self.maxRedirects = maxRedirects
            self.allowsHTTPSToHTTP = allowsHTTPSToHTTP
        }
    }

    private let storage: Storage

    private init(mode: Mode, maxRedirects: Int, allowsHTTPSToHTTP: Bool) {
        storage = Storage(mode: mode, maxRedirects: maxRedirects, allowsHTTPSToHTTP: allowsHTTPSToHTTP)
    }

    var mode: Mode { storage.mode }
    /// Most hops followed for one request.
    public var maxRedirects: Int { storage.maxRedirects }
    /// Whether a hop from https to http is followed (otherwise it is refused).
    public var allowsHTTPSToHTTP: Bool { storage.allowsHTTPSToHTTP }

    /// Follow up to 10 hops, never from https to http.
    public static let `default` = RedirectPolicy(mode: .follow, maxRedirects: 10, allowsHTTPSToHTTP: false)

    /// Return every 3xx response as it is (a `Location` that cannot be parsed is still refused).
    public static let doNotFollow = RedirectPolicy(mode: .doNotFollow, maxRedirects: 0, allowsHTTPSToHTTP: false)

    /// Follow up to `maxRedirects` hops.
    ///
    /// - Parameters:
    ///   - maxRedirects: Most hops; one more fails with ``TransportError/Code/tooManyRedirects``.
    ///   - allowsHTTPSToHTTP: Whether a hop from https to http is followed.
    public static func follow(maxRedirects: Int = 10, allowsHTTPSToHTTP: Bool = false) -> RedirectPolicy {
        RedirectPolicy(mode: .follow, maxRedirects: max(0, maxRedirects), allowsHTTPSToHTTP: allowsHTTPSToHTTP)
    }

    /// Ask `decide` about every hop the rules allow; it runs on the calling task, may await, and sees
    /// the next request as it will be sent.
    ///
    /// - Parameters:
    ///   - maxRedirects: Most hops; one more fails with ``TransportError/Code/tooManyRedirects``.
    ///   - allowsHTTPSToHTTP: Whether a hop from https to http reaches `decide` (otherwise it is refused).
    ///   - decide: Chooses to follow, stop (return the 3xx) or refuse.
    public static func custom(
        maxRedirects: Int = 10, allowsHTTPSToHTTP: Bool = false, _ decide: @escaping @Sendable (RedirectHop) async -> Action
    ) -> RedirectPolicy {
        RedirectPolicy(mode: .custom(decide), maxRedirects: max(0, maxRedirects), allowsHTTPSToHTTP: allowsHTTPSToHTTP)
    }

    /// What decides how this policy behaves, to tell whether two requests make the same exchange: its
    /// mode and limits, and for a custom policy the policy value itself (its closure cannot be compared).
    package struct Identity: Hashable, Sendable {
        let mode: Int
        let maxRedirects: Int
        let allowsHTTPSToHTTP: Bool
        let custom: ObjectIdentifier?
    }

    /// See ``Identity``.
    package var identity: Identity {
        let mode: Int
        var custom: ObjectIdentifier?
        switch storage.mode {
        case .follow: mode = 0
        case .doNotFollow: mode = 1
        case .custom:
            mode = 2
            custom = ObjectIdentifier(storage)
        }
        return Identity(mode: mode, maxRedirects: maxRedirects, allowsHTTPSToHTTP: allowsHTTPSToHTTP, custom: custom)
    }

    /// Whether this policy follows redirects at all.
    public var follows: Bool {
        if case .doNotFollow = mode { return false }
        return true
    }
}
