// Curlew — a request checked and parsed on the caller's thread, ready for the loop.

import CCurl
import HTTPTypes

/// A request whose URL has been parsed by libcurl's URL parser and whose header values were checked.
///
/// Checking happens on the calling task's thread so that a bad request is refused before it is queued,
/// and so the loop thread spends no time parsing. The parsed URL is handed to the easy handle as
/// `CURLOPT_CURLU`, so libcurl does not parse it a second time.
final class PreparedRequest: @unchecked Sendable {
    // @unchecked: `url` is a CURLU handle written only in `init` on the caller's thread and afterwards
    // only read (by libcurl, on the loop thread). The hand-over goes through the loop inbox's lock,
    // which orders the writes before the reads; the handle is freed in `deinit`, after both are done.
    let request: TransportRequest
    let url: OpaquePointer

    init(_ request: TransportRequest) throws(TransportError) {
        self.request = request
        guard Self.hasHTTPScheme(request.url) else {
            throw TransportError(
                .invalidURL, message: "only absolute http:// and https:// URLs are supported: \(String(reflecting: request.url))",
                url: request.url, method: request.method.rawValue)
        }
        guard let handle = curl_url() else {
            throw TransportError(.curl, message: "libcurl could not allocate a URL handle", url: request.url)
        }
        let code = request.url.withCString { curl_url_set(handle, CURLUPART_URL, $0, 0) }
        guard code == CURLUE_OK else {
            let reason = curl_url_strerror(code).map { String(cString: $0) } ?? "malformed URL"
            curl_url_cleanup(handle)
            throw TransportError(
                .invalidURL, message: "libcurl cannot parse the URL \(String(reflecting: request.url)): \(reason)",
                url: request.url, method: request.method.rawValue)
        }
        for field in request.headerFields where !HeaderValidation.isSendable(value: field.value) {
            curl_url_cleanup(handle)
            throw TransportError(
                .invalidHeader, message: "value of header \(field.name) contains CR, LF or NUL",
                url: request.url, method: request.method.rawValue)
        }
        self.url = handle
    }

    deinit { curl_url_cleanup(url) }

    /// An error about this request.
    func error(_ code: TransportError.Code, _ message: String) -> TransportError {
        TransportError(code, message: message, url: request.url, method: request.method.rawValue)
    }

    /// Whether the URL starts with `http://` or `https://`, ignoring case (curl would accept others).
    private static func hasHTTPScheme(_ url: String) -> Bool {
        var iterator = url.utf8.makeIterator()
        let http: [UInt8] = Array("http".utf8)
        for expected in http {
            guard let byte = iterator.next(), byte | 0x20 == expected else { return false }
        }
        var next = iterator.next()
        if next.map({ $0 | 0x20 }) == UInt8(ascii: "s") { next = iterator.next() }
        guard next == UInt8(ascii: ":"), iterator.next() == UInt8(ascii: "/"), iterator.next() == UInt8(ascii: "/")
        else { return false }
        return true
    }
}
