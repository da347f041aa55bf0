// Curlew — deciding and decoding an ApiResult from a response.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CurlewJSON

extension ApiResult where Value: Decodable, ApiErrorMessage: Decodable {
    /// Decodes a response by its status code: 2xx as `Value`, anything else as `ApiErrorMessage`, and
    /// an error body that does not decode as ``ApiResult/unexpected(_:_:)`` with the raw body kept.
    ///
    /// Bodies decode exactly as `decoder` would decode them, with Curlew's faster JSON decoder whenever
    /// it can reproduce `decoder`'s settings (a `JSONDecoder` subclass is always used itself).
    ///
    /// - Throws: ``CurlewError/objectMapping(_:_:)`` when a 2xx body does not decode as `Value` (a
    ///   client-side failure, not an API error).
    @inlinable
    public static func decode(from response: ApiResponse, using decoder: JSONDecoder = JSONDecoder()) throws(CurlewError)
        -> ApiResult
    {
        try decode(from: response, with: JSONBodyDecoder(decoder))
    }

    /// Decodes a response by its status code with `bodyDecoder`.
    @inlinable
    static func decode(from response: ApiResponse, with bodyDecoder: JSONBodyDecoder) throws(CurlewError)
        -> ApiResult
    {
        if (200..<300).contains(response.statusCode), Value.self == EmptyBody.self, let empty = EmptyBody() as? Value {
            return .success(empty, response)
        }
        // A download's body is its file.
        let data = try response.bodyData()
        if (200..<300).contains(response.statusCode) {
            do {
                return .success(try bodyDecoder.decode(Value.self, from: data), response)
            } catch {
                throw .objectMapping(error, response)
            }
        }
        do {
            return .failure(try bodyDecoder.decode(ApiErrorMessage.self, from: data), response)
        } catch {
            return .unexpected(
                UnexpectedApiError(
                    statusCode: response.statusCode, body: data, message: fallbackMessage(for: response, body: data),
                    decodingFailure: "\(error)"),
                response)
        }
    }

    @usableFromInline
    static func fallbackMessage(for response: ApiResponse, body: Data) -> String {
        let type = response.headerFields[.contentType].map { ", \($0)" } ?? ""
        let size = body.isEmpty ? "empty body" : "\(body.count) bytes"
        return "Unexpected response from the server (HTTP \(response.statusCode)\(type), \(size))"
    }
}
