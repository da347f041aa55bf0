// Curlew — parameters as a property-list body.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes parameters as a property list (XML or binary) in the body, with
/// `Content-Type: application/x-plist` unless the request sets one.
///
/// Property lists have no null, so a `JSONValue.null` anywhere in the parameters is refused with
/// its location rather than silently dropped.
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
    ///
    /// - Parameter format: The property-list format; XML by default.
    public init(format: Format = .xml) {
        self.format = format
    }

    /// Returns `request` with `parameters` as its property-list body. Nil parameters leave the request
    /// unchanged.
    ///
    /// - Parameters:
    ///   - request: The request to add the body to.
    ///   - parameters: The parameters.
    /// - Returns: The request with the body.
    /// - Throws: ``ParameterEncodingError/unencodable(_:)`` naming the key path of the first null, or
    ///   reporting the property-list encoder's failure.
    public func encode(_ request: TransportRequest, with parameters: [String: JSONValue]?) throws -> TransportRequest {
        guard let parameters else { return request }
        if let path = Self.firstNull(in: .object(parameters), path: "") {
            throw ParameterEncodingError.unencodable(
                "a property list cannot hold null (at \(path.isEmpty ? "top level" : path))")
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

    /// The dotted key path of the first null, searching keys in sorted order so the message is stable.
    private static func firstNull(in value: JSONValue, path: String) -> String? {
        switch value {
        case .null:
            return path
        case .object(let object):
            for key in object.keys.sorted() {
                if let member = object[key], let found = firstNull(in: member, path: Self.join(path, key)) {
                    return found
                }
            }
            return nil
        case .array(let array):
            for (index, element) in array.enumerated() {
                if let found = firstNull(in: element, path: Self.join(path, String(index))) { return found }
            }
            return nil
        default:
            return nil
        }
    }

    private static func join(_ path: String, _ component: String) -> String {
        path.isEmpty ? component : "\(path).\(component)"
    }
}
