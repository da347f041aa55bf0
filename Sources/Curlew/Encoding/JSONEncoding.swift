// Curlew — parameters as a JSON body.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes parameters as a JSON object in the body, with `Content-Type: application/json` unless the
/// request sets one. Keys are sorted, so equal parameters give equal bytes.
public struct JSONEncoding: ParameterEncoding, Hashable {
    /// Compact JSON.
    public static let `default` = JSONEncoding()
    /// Indented JSON.
    public static let prettyPrinted = JSONEncoding(prettyPrinted: true)

    /// Whether the JSON is indented.
    public var prettyPrinted: Bool

    /// Creates an encoding.
    public init(prettyPrinted: Bool = false) {
        self.prettyPrinted = prettyPrinted
    }

    public func encode(_ request: TransportRequest, with parameters: [String: JSONValue]?) throws -> TransportRequest {
        guard let parameters else { return request }
        let encoder = JSONEncoder()
        encoder.outputFormatting = prettyPrinted ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do {
            data = try encoder.encode(JSONValue.object(parameters))
        } catch {
            throw ParameterEncodingError.unencodable("\(error)")
        }
        return request.withBody(data, contentType: "application/json")
    }
}
