// Curlew — the redirect rules as a pure function: a 3xx in, the next request or a refusal out.

import HTTPTypes

/// Decides what a redirect response leads to, by ``RedirectPolicy``'s rules. Pure: no I/O, no clock.
enum RedirectRules {
    /// The outcome for one response.
    enum Decision {
        /// Not a redirect to follow: the response is the answer.
        case returnResponse
        /// Send `next` (and ask a custom policy first).
        case follow(next: TransportRequest, leavesOrigin: Bool)
        /// Fail with `code` (`redirectRefused`, `tooManyRedirects` or `bodyNotReplayable`).
        case fail(TransportError.Code, String)
    }

    /// Statuses that are followed.
    static let followed: Set<Int> = [301, 302, 303, 307, 308]

    /// Fields that still follow a hop that leaves the origin: they say what is wanted, nothing about who
    /// asks (`Range` and `If-Range` so that a resumed download redirected to a CDN still resumes).
    static let crossOriginAllowed: Set<HTTPField.Name> = [
        .accept, .acceptLanguage, .acceptEncoding, .userAgent, .range, .ifRange,
    ]

    /// Fields that describe a body, dropped with it when a hop rewrites the method.
    static let bodyFields: Set<HTTPField.Name> = [
        .contentType, .contentLength, .contentEncoding, .contentLanguage, .contentLocation, .expect,
        .transferEncoding,
    ]

    /// - Parameters:
    ///   - request: The request that got `status`.
    ///   - origin: Its pool key (scheme, host, port).
    ///   - status: The response status.
    ///   - hasLocation: Whether the response carries a `Location` field.
    ///   - target: The `Location` resolved against the request URL and its key; nil when it cannot be parsed.
    ///   - policy: The policy in force.
    ///   - hopsSoFar: Hops already followed for this request.
    ///   - visited: `METHOD URL` of every request made so far for this call, compared byte for byte (`==`
    ///     would take a URL with `é` for one with `e\u{301}`: a different request, no loop).
    ///   - detectsLoops: Whether a hop back to a request already made is a loop. Not with a cookie jar:
    ///     a login bounce (to a login page, back with a session cookie) revisits a URL legitimately.
    static func decide(
        request: TransportRequest, origin: PoolKey, status: Int, hasLocation: Bool, target: (url: String, key: PoolKey)?,
        policy: RedirectPolicy, hopsSoFar: Int, visited: some Sequence<String>, detectsLoops: Bool = true
    ) -> Decision {
        guard followed.contains(status), hasLocation else { return .returnResponse }
        guard let target else {
            return .fail(.redirectRefused, "the redirect's Location cannot be parsed")
        }
        guard policy.follows else { return .returnResponse }
        guard target.key.scheme == "http" || target.key.scheme == "https" else {
            return .fail(.redirectRefused, "a redirect to the \(target.key.scheme) scheme is refused")
        }
        if origin.scheme == "https", target.key.scheme == "http", !policy.allowsHTTPSToHTTP {
            return .fail(.redirectRefused, "a redirect from https to http is refused")
        }
        guard hopsSoFar < policy.maxRedirects else {
            return .fail(.tooManyRedirects, "more than \(policy.maxRedirects) redirects")
        }
        let leavesOrigin = target.key != origin
        let rewritesMethod = (status == 303 && request.method != .head) || ((status == 301 || status == 302) && request.method == .post)
        var next = request
        next.url = target.url
        if rewritesMethod {
            next.method = .get
            next.body = nil
        }
        let sendsBody = !rewritesMethod && next.body != nil
        next.headerFields = HTTPFields(
            request.headerFields.filter { field in
                if rewritesMethod, bodyFields.contains(field.name) { return false }
                guard leavesOrigin else { return true }
                if field.indexingStrategy == .disallow { return false }
                return crossOriginAllowed.contains(field.name) || (sendsBody && field.name == .contentType)
            })
        let key = "\(next.method.rawValue) \(next.url)"
        if detectsLoops, visited.contains(where: { $0.hasSameUTF8(as: key) }) {
            return .fail(.tooManyRedirects, "the redirects loop back to \(next.method.rawValue) \(next.url)")
        }
        if sendsBody, let body = next.body, !body.isReplayable {
            return .fail(.bodyNotReplayable, "a \(status) redirect resends the body, which cannot be replayed")
        }
        return .follow(next: next, leavesOrigin: leavesOrigin)
    }
}
