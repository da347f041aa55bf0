// Curlew — the request edits the encodings share: a body with a default type, a query appended.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension TransportRequest {
    /// A copy with this body, and this `Content-Type` unless the request already sets one.
    ///
    /// A type set by the target or an endpoint closure wins, so `application/vnd.api+json` survives
    /// a JSON encoding.
    func withBody(_ data: Data, contentType: String?) -> TransportRequest {
        var copy = self
        copy.body = .data(data)
        if let contentType, copy.headerFields[.contentType] == nil {
            copy.headerFields[.contentType] = contentType
        }
        return copy
    }

    /// Appends an already-escaped query, joining an existing query with `&` and keeping any fragment last.
    mutating func appendQuery(_ query: String) throws(ParameterEncodingError) {
        guard !query.isEmpty else { return }
        var base = Substring(url)
        var fragment: Substring = ""
        if let hash = base.firstIndex(of: "#") {
            fragment = base[hash...]
            base = base[..<hash]
        }
        guard !base.isEmpty else { throw .invalidURL(url) }
        let separator: String
        if let question = base.firstIndex(of: "?") {
            // A bare `?` or a trailing `&` already separates; anything else needs `&`.
            separator = base.index(after: question) == base.endIndex || base.hasSuffix("&") ? "" : "&"
        } else {
            separator = "?"
        }
        url = base + separator + query + fragment
    }
}
