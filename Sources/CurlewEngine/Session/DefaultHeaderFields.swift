// Curlew — the header fields a session adds to every request that does not set them itself.

import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The fields the engine adds to requests: `User-Agent` and `Accept-Encoding` unless a request sets
/// its own, `Expect: 100-continue` for large bodies when configured, and the Basic `Authorization`
/// libcurl derives from credentials in the URL.
///
/// One value serves both the loop thread (which sends them) and ``HTTPTransport/wireRequest(for:)``
/// (which shows them, so logs and curl lines match what goes out).
struct DefaultHeaderFields: Sendable {
    /// The fields in the order they go on the wire, ahead of the request's own.
    let fields: [HTTPField]
    /// Bodies at least this long are sent with `Expect: 100-continue`; nil never.
    let expectContinueThreshold: Int?

    init(_ configuration: SessionConfiguration) {
        var fields: [HTTPField] = []
        if !configuration.userAgent.isEmpty { fields.append(HTTPField(name: .userAgent, value: configuration.userAgent)) }
        if configuration.automaticDecompression {
            fields.append(HTTPField(name: .acceptEncoding, value: ContentDecoder.offered))
        }
        self.fields = fields
        expectContinueThreshold = configuration.expectContinueThreshold
    }

    /// `request` as the engine sends it: the default fields the request does not set, then its own.
    /// Every response offers the codings the engine decodes itself (gzip and deflate).
    func applied(to request: TransportRequest) -> TransportRequest {
        var sent = HTTPFields()
        for field in fields where request.headerFields[field.name] == nil { sent.append(field) }
        sent.append(contentsOf: request.headerFields)
        if request.headerFields[.authorization] == nil, let credentials = Self.userInfo(in: request.url) {
            sent.append(HTTPField(name: .authorization, value: "Basic " + Data(credentials.utf8).base64EncodedString()))
        }
        // A body of unknown length (or sent chunked, with trailers) counts as reaching any threshold.
        if let threshold = expectContinueThreshold, let body = request.body, request.method != .head,
            body.hasTrailers || (body.knownLength ?? .max) >= threshold, request.headerFields[.expect] == nil
        {
            sent.append(HTTPField(name: .expect, value: "100-continue"))
        }
        var copy = request
        copy.headerFields = sent
        return copy
    }

    /// The percent-decoded `user:password` of a URL's authority, as libcurl sends it, or nil.
    private static func userInfo(in url: String) -> String? {
        guard let schemeEnd = url.firstRange(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest[..<(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)]
        guard let at = authority.lastIndex(of: "@") else { return nil }
        let raw = authority[..<at]
        let user = raw.firstIndex(of: ":").map { raw[..<$0] } ?? raw
        let password = raw.firstIndex(of: ":").map { raw[raw.index(after: $0)...] } ?? ""
        return "\(percentDecoded(user)):\(percentDecoded(password))"
    }

    private static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), let high = utf8.index(index, offsetBy: 1, limitedBy: utf8.endIndex),
                let low = utf8.index(index, offsetBy: 2, limitedBy: utf8.endIndex), low < utf8.endIndex,
                let value = UInt8(String(decoding: [utf8[high], utf8[low]], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index = utf8.index(after: low)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

}
