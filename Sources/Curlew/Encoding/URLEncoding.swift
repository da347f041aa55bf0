// Curlew — parameters as a URL-encoded query string or form body.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes parameters as `key=value&...` into the query string or an
/// `application/x-www-form-urlencoded` body.
///
/// Keys are sorted, so the same parameters always produce the same bytes. Nested objects become
/// `key[sub]=value`; arrays and Booleans follow ``ArrayEncoding`` and ``BoolEncoding``. Everything but
/// RFC 3986 unreserved characters (and `?` and `/`, which are safe in a query) is percent-escaped.
public struct URLEncoding: ParameterEncoding, Hashable {
    /// Where the encoded parameters go.
    public enum Destination: Sendable, Hashable {
        /// GET, HEAD and DELETE put them in the query string; other methods in the body.
        case methodDependent
        /// Always the query string.
        case queryString
        /// Always the body.
        case httpBody
    }

    /// How array values are written.
    public enum ArrayEncoding: Sendable, Hashable {
        /// `key[]=1&key[]=2`.
        case brackets
        /// `key=1&key=2`.
        case noBrackets
        /// `key[0]=1&key[1]=2`.
        case indexInBrackets
    }

    /// How Boolean values are written.
    public enum BoolEncoding: Sendable, Hashable {
        /// `1` and `0`.
        case numeric
        /// `true` and `false`.
        case literal
    }

    /// Method-dependent destination, brackets for arrays, numeric Booleans.
    public static let `default` = URLEncoding()
    /// Always the query string.
    public static let queryString = URLEncoding(destination: .queryString)
    /// Always the body.
    public static let httpBody = URLEncoding(destination: .httpBody)

    /// Where the parameters go.
    public var destination: Destination
    /// How arrays are written.
    public var arrayEncoding: ArrayEncoding
    /// How Booleans are written.
    public var boolEncoding: BoolEncoding

    /// Creates an encoding.
    public init(destination: Destination = .methodDependent, arrayEncoding: ArrayEncoding = .brackets, boolEncoding: BoolEncoding = .numeric) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    public func encode(_ request: TransportRequest, with parameters: [String: JSONValue]?) throws -> TransportRequest {
        guard let parameters, !parameters.isEmpty else { return request }
        let query = self.query(parameters)
        guard encodesInURL(request.method) else {
            return request.withBody(Data(query.utf8), contentType: "application/x-www-form-urlencoded; charset=utf-8")
        }
        var request = request
        try request.appendQuery(query)
        return request
    }

    /// The encoded `key=value&...` string, keys sorted.
    public func query(_ parameters: [String: JSONValue]) -> String {
        var components: [(String, String)] = []
        for key in parameters.keys.sorted() {
            if let value = parameters[key] { components += queryComponents(key: key, value: value) }
        }
        return components.map { "\($0)=\($1)" }.joined(separator: "&")
    }

    private func encodesInURL(_ method: HTTPMethod) -> Bool {
        switch destination {
        case .methodDependent: method == .get || method == .head || method == .delete
        case .queryString: true
        case .httpBody: false
        }
    }

    /// The escaped pairs for one key and value, flattening objects and arrays.
    public func queryComponents(key: String, value: JSONValue) -> [(String, String)] {
        switch value {
        case .object(let object):
            return object.keys.sorted().flatMap { nested in
                object[nested].map { queryComponents(key: "\(key)[\(nested)]", value: $0) } ?? []
            }
        case .array(let array):
            return array.enumerated().flatMap { index, element in
                let arrayKey: String
                switch arrayEncoding {
                case .brackets: arrayKey = "\(key)[]"
                case .noBrackets: arrayKey = key
                case .indexInBrackets: arrayKey = "\(key)[\(index)]"
                }
                return queryComponents(key: arrayKey, value: element)
            }
        case .bool(let flag):
            let text = boolEncoding == .numeric ? (flag ? "1" : "0") : (flag ? "true" : "false")
            return [(Self.escape(key), text)]
        case .int(let number):
            return [(Self.escape(key), String(number))]
        case .double(let number):
            return [(Self.escape(key), Self.escape(String(number)))]
        case .string(let text):
            return [(Self.escape(key), Self.escape(text))]
        case .null:
            return [(Self.escape(key), "")]
        }
    }

    /// Percent-escapes everything except RFC 3986 unreserved characters, `?` and `/`.
    public static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "?"), UInt8(ascii: "/"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                escaped += "%" + Self.hex[Int(byte >> 4)] + Self.hex[Int(byte & 0x0F)]
            }
        }
        return escaped
    }

    private static let hex = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
}
