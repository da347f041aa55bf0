// Curlew — how parameters are put into a request.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Places parameters into a request: its query string, its body, or anywhere a custom encoding likes.
public protocol ParameterEncoding: Sendable {
    /// Returns `request` with `parameters` encoded into it.
    ///
    /// - Throws: ``ParameterEncodingError`` (or any error of a custom encoding); the provider reports
    ///   it as ``CurlewError/parameterEncoding(_:)`` and sends nothing.
    func encode(_ request: TransportRequest, with parameters: [String: JSONValue]?) throws -> TransportRequest
}

/// Why parameters could not be encoded.
public enum ParameterEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request's URL could not take a query string.
    case invalidURL(String)
    /// A value cannot be represented in the encoding's format.
    case unencodable(String)

    public var description: String {
        switch self {
        case .invalidURL(let url): "cannot add a query string to \(url)"
        case .unencodable(let reason): "cannot encode the parameters: \(reason)"
        }
    }
}

extension TransportRequest {
    /// A copy with this body, and this `Content-Type` unless the request already sets one.
    func withBody(_ data: Data, contentType: String?) -> TransportRequest {
        var copy = self
        copy.body = .data(data)
        if let contentType { copy.setIfAbsent(.contentType, contentType) }
        return copy
    }

    /// Sets a header field unless the request already has one with that name.
    mutating func setIfAbsent(_ name: HTTPField.Name, _ value: String) {
        if headerFields[name] == nil { headerFields[name] = value }
    }

    /// Appends an already-encoded query string, before any fragment.
    mutating func appendQuery(_ query: String) throws(ParameterEncodingError) {
        guard !query.isEmpty else { return }
        var base = url
        var fragment = ""
        if let hash = base.firstIndex(of: "#") {
            fragment = String(base[hash...])
            base = String(base[..<hash])
        }
        guard !base.isEmpty else { throw .invalidURL(url) }
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        url = base + separator + query + fragment
    }
}
