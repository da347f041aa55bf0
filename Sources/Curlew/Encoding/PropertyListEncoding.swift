// Curlew — parameters as a property-list body.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes parameters as a property list (XML or binary) in the body, with
/// `Content-Type: application/x-plist` unless the request sets one.
public struct PropertyListEncoding: ParameterEncoding, Hashable {
    /// XML property lists.
    public static let xml = PropertyListEncoding(format: .xml)
    /// Binary property lists.
    public static let binary = PropertyListEncoding(format: .binary)

    /// The two property-list formats.
    public enum Format: Sendable, Hashable {
        /// XML (`<?xml ...><plist>`).
        case xml
        /// Binary (`bplist00`).
        case binary
    }

    /// The format written.
    public var format: Format

    /// Creates an encoding.
    public init(format: Format = .xml) {
        self.format = format
    }

    public func encode(_ request: TransportRequest, with parameters: [String: JSONValue]?) throws -> TransportRequest {
        guard let parameters else { return request }
        if let path = Self.firstNull(in: .object(parameters), path: "") {
            throw ParameterEncodingError.unencodable("a property list cannot hold null (at \(path.isEmpty ? "top level" : path))")
        }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = format == .xml ? .xml : .binary
        let data: Data
        do {
            data = try encoder.encode(parameters)
        } catch {
            throw ParameterEncodingError.unencodable("\(error)")
        }
        return request.withBody(data, contentType: "application/x-plist")
    }

    private static func firstNull(in value: JSONValue, path: String) -> String? {
        switch value {
        case .null: return path
        case .object(let object):
            for key in object.keys.sorted() {
                if let value = object[key], let found = firstNull(in: value, path: path.isEmpty ? key : "\(path).\(key)") { return found }
            }
            return nil
        case .array(let array):
            for (index, element) in array.enumerated() {
                if let found = firstNull(in: element, path: "\(path).\(index)") { return found }
            }
            return nil
        default: return nil
        }
    }
}
