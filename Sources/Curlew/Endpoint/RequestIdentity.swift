// Curlew — what makes two requests the same request, for endpoint equality and in-flight sharing.

import CurlewJSON

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request reduced to what it sends: method, URL, header fields, transfer options and body, with a
/// JSON body in canonical form.
///
/// Encoders may write an object's keys in any order (swift-foundation's `JSONEncoder` does without
/// `.sortedKeys`), so two equal values can encode to different bytes. A body whose `Content-Type` is
/// JSON (`application/json`, `…+json`) is compared by content: its canonical form (members sorted by
/// key, no whitespace), built only here, when a comparison or a key asks for it. The bytes sent stay
/// the encoder's.
struct RequestIdentity: Hashable {
    let method: HTTPRequest.Method
    let url: String
    let headerFields: HTTPFields
    let options: TransferOptions
    let body: Data?

    init(_ request: TransportRequest) {
        method = request.method
        url = request.url
        headerFields = request.headerFields
        options = request.options
        body = request.body?.inMemoryBytes.map { bytes in
            guard Self.isJSON(request.headerFields[.contentType]) else { return bytes }
            return CanonicalJSON.canonical(bytes) ?? bytes
        }
    }

    /// Whether a `Content-Type` names JSON: `application/json` or a `+json` type, parameters ignored.
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first ?? ""
        let type = mediaType.drop { $0 == " " || $0 == "\t" }.lowercased().trimmingSuffix(while: { $0 == " " || $0 == "\t" })
        return type == "application/json" || type.hasSuffix("+json")
    }
}

extension String {
    /// The string without the trailing characters that match `predicate`.
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[..<end]
    }
}
