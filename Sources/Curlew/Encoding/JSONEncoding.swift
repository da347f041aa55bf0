// Curlew — parameters as a JSON body.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes parameters as a JSON object in the body, with `Content-Type: application/json` unless the
/// request sets one.
///
/// Keys are sorted and `/` is not escaped, so equal parameters give equal, readable bytes (stable
/// signatures, in-flight sharing, exact test expectations).
public struct JSONEncoding: ParameterEncoding, Hashable {
    /// Compact JSON: `{"a":1,"b":[true]}`.
    public static let `default` = JSONEncoding()
    /// Indented JSON.
    public static let prettyPrinted = JSONEncoding(prettyPrinted: true)

    /// Whether the JSON is indented.
    public var prettyPrinted: Bool

    /// Creates an encoding.
    ///
    /// - Parameter prettyPrinted: Whether to indent the JSON; compact by default.
    public init(prettyPrinted: Bool = false) {
        self.prettyPrinted = prettyPrinted
    }

    /// Returns `request` with `parameters` as its JSON body. Nil parameters leave the request unchanged;
    /// empty ones give `{}`.
    ///
    /// - Parameters:
    ///   - request: The request to add the body to.
    ///   - parameters: The parameters.
    /// - Returns: The request with the body.
    /// - Throws: ``ParameterEncodingError/unencodable(_:)`` for a value JSON cannot hold (NaN, infinity).
    public func encode(_ request: TransportRequest, with parameters: [String: JSONValue]?) throws -> TransportRequest {
        guard let parameters else { return request }
        // A fresh encoder per call: cheap, and no lock shared between concurrent requests.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if prettyPrinted { encoder.outputFormatting.insert(.prettyPrinted) }
        let data: Data
        do {
            data = try encoder.encode(JSONValue.object(parameters))
        } catch {
            throw ParameterEncodingError.unencodable("\(error)")
        }
        return request.withBody(data, contentType: "application/json")
    }
}
