// Curlew — a request checked and parsed on the caller's thread, ready for the loop.

import CCurl
import HTTPTypes

/// A request whose URL has been parsed by libcurl's URL parser and whose header values were checked.
///
/// Checking happens on the calling task's thread so that a bad request is refused before it is queued,
/// and so the loop thread spends no time parsing. The parsed URL is handed to the easy handle as
/// `CURLOPT_CURLU`, so libcurl does not parse it a second time.
struct PreparedRequest: Sendable {
    private(set) var request: TransportRequest
    let url: ParsedURL
    /// Which connections the request may use: the URL's key, set apart by the request's own socket or
    /// TLS settings.
    private(set) var poolKey: PoolKey

    init(_ request: TransportRequest, urls: ParsedURLCache) throws(TransportError) {
        // The scheme is checked once per URL, with its parsing (a URL the cache holds passed already).
        guard let parsed = urls.parsedHTTP(request.url) else {
            throw TransportError(
                .invalidURL, message: "only absolute http:// and https:// URLs are supported: \(String(reflecting: request.url))",
                url: request.url, method: request.method.rawValue)
        }
        let url: ParsedURL
        switch parsed {
        case .success(let parsed):
            url = parsed
        case .failure(.noMemory):
            throw TransportError(.curl, message: "libcurl could not allocate a URL handle", url: request.url)
        case .failure(.refused(let reason)):
            throw TransportError(
                .invalidURL, message: "libcurl cannot parse the URL \(String(reflecting: request.url)): \(reason)",
                url: request.url, method: request.method.rawValue)
        }
        for field in request.headerFields where !HeaderValidation.isSendable(value: field.value) {
            throw TransportError(
                .invalidHeader, message: "value of header \(field.name) contains CR, LF or NUL",
                url: request.url, method: request.method.rawValue)
        }
        // Read in place: a copy of the options retains each of their fields.
        var poolKey = url.poolKey
        if !request.options.isEmpty {
            let identity =
                request.options.clientIdentity != nil || request.options.pinnedPublicKeys != nil
                ? PoolKey.TLSIdentity(clientIdentity: request.options.clientIdentity, pins: request.options.pinnedPublicKeys)
                : nil
            poolKey = poolKey.with(unixSocketPath: request.options.unixSocketPath, tlsIdentity: identity)
        }
        if let body = request.body, body.hasTrailers {
            poolKey = poolKey.speakingHTTP1Only()
            if let fields = body.trailerSource?.declared { try Self.check(trailers: fields, request) }
        }
        // Made in one step at the end: a value built field by field in a throwing initialiser was copied
        // out whole, then destroyed.
        self.init(request: request, url: url, poolKey: poolKey)
    }

    private init(request: TransportRequest, url: ParsedURL, poolKey: PoolKey) {
        self.request = request
        self.url = url
        self.poolKey = poolKey
    }

    /// Replaces the request's header fields with `fields`, whose values were checked (trace context).
    mutating func replaceFields(_ fields: HTTPFields) {
        request.headerFields = fields
    }

    /// This request on connections that speak HTTP/1.1 only.
    func speakingHTTP1Only() -> PreparedRequest {
        var copy = self
        copy.poolKey = poolKey.speakingHTTP1Only()
        return copy
    }

    /// Refuses trailer fields that may not be sent as trailers or whose values would not be sent as given.
    static func check(trailers: HTTPFields, _ request: TransportRequest) throws(TransportError) {
        for field in trailers {
            if TrailerSource.forbidden.contains(field.name) {
                throw TransportError(
                    .invalidHeader, message: "\(field.name) may not be sent as a trailer field", url: request.url,
                    method: request.method.rawValue)
            }
            if !HeaderValidation.isSendable(value: field.value) {
                throw TransportError(
                    .invalidHeader, message: "value of trailer field \(field.name) contains CR, LF or NUL", url: request.url,
                    method: request.method.rawValue)
            }
        }
    }

    /// An error about this request.
    func error(_ code: TransportError.Code, _ message: String) -> TransportError {
        TransportError(code, message: message, url: request.url, method: request.method.rawValue)
    }
}
