// Curlew — turning a response body into JSON, a string or a Decodable value.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension ApiResponse {
    /// The body as a JSON value.
    ///
    /// - Parameter failsOnEmptyData: When false, an empty body gives ``JSONValue/null`` instead of an error.
    /// - Throws: ``CurlewError/jsonMapping(_:)`` when the body is not JSON.
    public func mapJSON(failsOnEmptyData: Bool = true) throws(CurlewError) -> JSONValue {
        if data.isEmpty && !failsOnEmptyData { return .null }
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw .jsonMapping(self)
        }
    }

    /// The body as UTF-8 text, or the string found at a dotted key path of the JSON body.
    ///
    /// - Throws: ``CurlewError/stringMapping(_:)`` when the body is not UTF-8 or the value at the key
    ///   path is missing or not a string; ``CurlewError/jsonMapping(_:)`` when a key path is given and the
    ///   body is not JSON.
    public func mapString(atKeyPath keyPath: String? = nil) throws(CurlewError) -> String {
        if let keyPath {
            guard let string = try mapJSON().value(atKeyPath: keyPath)?.stringValue else {
                throw .stringMapping(self)
            }
            return string
        }
        guard let string = String(data: data, encoding: .utf8) else { throw .stringMapping(self) }
        return string
    }

    /// The body (or the value at a dotted key path such as `"data.users"` or `"items.0.name"`) decoded
    /// as `type`.
    ///
    /// Scalars at a key path (an `Int`, a `Bool`, a `String`) decode too. With `failsOnEmptyData: false`
    /// an empty body decodes as `{}` (or `[{}]`), so a type whose properties are all optional comes back
    /// with nil fields, as in Moya.
    ///
    /// - Throws: ``CurlewError/objectMapping(_:_:)`` when decoding fails (including a value of the wrong
    ///   type at the key path); ``CurlewError/jsonMapping(_:)`` when the key path does not exist.
    public func map<D: Decodable>(
        _ type: D.Type, atKeyPath keyPath: String? = nil, using decoder: JSONDecoder = JSONDecoder(),
        failsOnEmptyData: Bool = true
    ) throws(CurlewError) -> D {
        var source = data
        if let keyPath, !keyPath.isEmpty {
            let root = try mapJSON(failsOnEmptyData: failsOnEmptyData)
            if let value = root.value(atKeyPath: keyPath) {
                return try decode(type, from: value, using: decoder)
            }
            if failsOnEmptyData { throw .jsonMapping(self) }
            source = Data()
        }
        if source.isEmpty && !failsOnEmptyData {
            for empty in ["{}", "[{}]"] {
                if let value = try? decoder.decode(D.self, from: Data(empty.utf8)) { return value }
            }
        }
        do {
            return try decoder.decode(D.self, from: source)
        } catch {
            throw .objectMapping(error, self)
        }
    }

    /// Decodes a JSON value found at a key path, wrapping it so scalars decode as well as containers.
    private func decode<D: Decodable>(_ type: D.Type, from value: JSONValue, using decoder: JSONDecoder) throws(CurlewError) -> D {
        do {
            let wrapped = try JSONEncoder().encode(ValueWrapper(value: value))
            return try decoder.decode(DecodedWrapper<D>.self, from: wrapped).value
        } catch {
            throw .objectMapping(error, self)
        }
    }
}

private struct ValueWrapper: Encodable {
    let value: JSONValue
}

private struct DecodedWrapper<D: Decodable>: Decodable {
    let value: D
}
