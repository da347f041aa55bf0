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
/// `key[sub]=value`; arrays and Booleans follow ``ArrayEncoding`` and ``BoolEncoding``; `null` gives
/// an empty value (`key=`). Everything but RFC 3986 unreserved characters is percent-escaped (see
/// ``escape(_:)``). Query parameters are appended to a query the URL already has, before any fragment.
public struct URLEncoding: ParameterEncoding, Hashable {
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
    ///
    /// - Parameters:
    ///   - destination: Where the parameters go; method-dependent by default.
    ///   - arrayEncoding: How arrays are written; `key[]=` by default.
    ///   - boolEncoding: How Booleans are written; `1`/`0` by default.
    public init(
        destination: Destination = .methodDependent, arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric
    ) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    /// Returns `request` with `parameters` in its query string or as a form body, per ``destination``.
    ///
    /// A body gets `Content-Type: application/x-www-form-urlencoded; charset=utf-8` unless the request
    /// already has a `Content-Type`. Nil or empty parameters leave the request unchanged.
    ///
    /// - Parameters:
    ///   - request: The request to add the parameters to.
    ///   - parameters: The parameters.
    /// - Returns: The request with the parameters.
    /// - Throws: ``ParameterEncodingError/invalidURL(_:)`` when the URL cannot take a query string.
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

    /// The encoded `key=value&...` text for `parameters`, keys sorted at every level.
    ///
    /// - Parameter parameters: The parameters.
    /// - Returns: The escaped query, without a leading `?`; empty for no parameters.
    public func query(_ parameters: [String: JSONValue]) -> String {
        var components: [(String, String)] = []
        for key in parameters.keys.sorted() {
            if let value = parameters[key] { components += queryComponents(key: key, value: value) }
        }
        return components.map { "\($0)=\($1)" }.joined(separator: "&")
    }

    private func encodesInURL(_ method: HTTPRequest.Method) -> Bool {
        switch destination {
        case .methodDependent: method == .get || method == .head || method == .delete
        case .queryString: true
        case .httpBody: false
        }
    }

    /// The escaped name/value pairs for one parameter, flattening objects and arrays.
    ///
    /// - Parameters:
    ///   - key: The parameter's (unescaped) name; nested names are built as `key[sub]`.
    ///   - value: Its value.
    /// - Returns: The pairs in output order, each side already escaped.
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

    /// Percent-escapes every byte except RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`).
    ///
    /// Stricter than Alamofire, which leaves `?` and `/` alone in queries: escaping them too is always
    /// understood by servers and leaves no character whose meaning depends on where it lands.
    ///
    /// - Parameter text: A key or value.
    /// - Returns: The escaped text; a space becomes `%20`, `é` becomes `%C3%A9`.
    public static func escape(_ text: String) -> String {
        PercentEscaping.escape(text, allowed: PercentEscaping.isUnreserved)
    }
}
