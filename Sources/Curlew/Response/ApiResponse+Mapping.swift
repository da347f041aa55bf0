// Curlew — turning a response body into JSON, a string or a Decodable value.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CurlewJSON

extension ApiResponse {
    /// The body as a JSON value.
    ///
    /// - Parameter failsOnEmptyData: When false, an empty body gives ``JSONValue/null`` instead of an error.
    /// - Throws: ``CurlewError/jsonMapping(_:)`` when the body is not JSON.
    public func mapJSON(failsOnEmptyData: Bool = true) throws(CurlewError) -> JSONValue {
        let data = try bodyData()
        if data.isEmpty && !failsOnEmptyData { return .null }
        do {
            return try JSONBodyDecoder.standard.decode(JSONValue.self, from: data)
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
        guard let string = String(data: try bodyData(), encoding: .utf8) else { throw .stringMapping(self) }
        return string
    }

    /// The body (or the value at a dotted key path such as `"data.users"` or `"items.0.name"`) decoded
    /// as `type`.
    ///
    /// The value at a key path decodes as `decoder` would decode it were it the whole body: scalars (an
    /// `Int`, a `Bool`, a `String`) decode too, and coding paths in decoding errors start at that value.
    /// With `failsOnEmptyData: false` an empty body (or a missing key path) decodes as `{}` (or `[{}]`),
    /// so a type whose properties are all optional comes back with nil fields, as in Moya.
    ///
    /// - Throws: ``CurlewError/objectMapping(_:_:)`` when decoding fails (including a value of the wrong
    ///   type at the key path); ``CurlewError/jsonMapping(_:)`` when a key path is given and the body is
    ///   not JSON or the key path does not exist.
    public func map<D: Decodable>(
        _ type: D.Type, atKeyPath keyPath: String? = nil, using decoder: JSONDecoder = JSONDecoder(),
        failsOnEmptyData: Bool = true
    ) throws(CurlewError) -> D {
        let bodyDecoder = JSONBodyDecoder(decoder)
        let data = try bodyData()
        if data.isEmpty && !failsOnEmptyData { return try decodeEmptyBody(type, with: bodyDecoder) }
        guard let keyPath, !keyPath.isEmpty else {
            do {
                return try bodyDecoder.decode(type, from: data)
            } catch {
                throw .objectMapping(error, self)
            }
        }
        do {
            return try bodyDecoder.decode(type, from: data, atKeyPath: keyPath)
        } catch JSONKeyPathError.noValue where !failsOnEmptyData {
            return try decodeEmptyBody(type, with: bodyDecoder)
        } catch is JSONKeyPathError {
            throw .jsonMapping(self)
        } catch {
            throw .objectMapping(error, self)
        }
    }

    /// `type` decoded as if the body were `{}`, else `[{}]`, else empty.
    private func decodeEmptyBody<D: Decodable>(_ type: D.Type, with bodyDecoder: JSONBodyDecoder) throws(CurlewError)
        -> D
    {
        for empty in ["{}", "[{}]"] {
            if let value = try? bodyDecoder.decode(type, from: Data(empty.utf8)) { return value }
        }
        do {
            return try bodyDecoder.decode(type, from: Data())
        } catch {
            throw .objectMapping(error, self)
        }
    }
}
