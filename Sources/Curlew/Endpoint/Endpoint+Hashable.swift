// Curlew — endpoints compare by the request they build.

extension Endpoint: Equatable, Hashable {
    /// Whether two endpoints build the same request: URL, method, header fields, transfer options and
    /// body. A JSON body compares by content, whatever order its encoder wrote the keys in.
    ///
    /// Closures cannot be compared, so the sample response and a custom redirect policy are ignored. Two
    /// endpoints that both fail to build compare their URL, method and header fields; one that builds
    /// never equals one that fails.
    public static func == (lhs: Endpoint, rhs: Endpoint) -> Bool {
        switch (try? lhs.urlRequest(), try? rhs.urlRequest()) {
        case (let left?, let right?):
            RequestIdentity(left) == RequestIdentity(right)
        case (nil, nil):
            lhs.url == rhs.url && lhs.method == rhs.method && lhs.httpHeaderFields == rhs.httpHeaderFields
        default:
            false
        }
    }

    /// Hashes what `==` compares: the built request, or URL, method and header fields when it fails.
    public func hash(into hasher: inout Hasher) {
        if let request = try? urlRequest() {
            hasher.combine(true)
            hasher.combine(RequestIdentity(request))
        } else {
            hasher.combine(false)
            hasher.combine(url)
            hasher.combine(method)
            hasher.combine(httpHeaderFields)
        }
    }
}
