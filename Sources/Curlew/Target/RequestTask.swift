// Curlew — what a target's request sends.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a request sends: nothing, raw data, an `Encodable` as JSON, or parameters with an encoding.
///
/// Moya calls this `Task`; Curlew names it `RequestTask` because `Task` is Swift's unit of
/// concurrency. (Uploads, downloads and multipart bodies come with streamed bodies.)
public enum RequestTask: Sendable {
    /// No body and no parameters.
    case requestPlain
    /// This data as the body.
    case requestData(Data)
    /// This value encoded as JSON by a `JSONEncoder` with default strategies and sorted keys.
    case requestJSONEncodable(any Encodable & Sendable)
    /// This value encoded as JSON by the given encoder.
    case requestCustomJSONEncodable(any Encodable & Sendable, encoder: JSONEncoder)
    /// Parameters, placed by the encoding (query string or body).
    case requestParameters(parameters: [String: JSONValue], encoding: any ParameterEncoding)
    /// Data as the body plus URL-encoded query parameters.
    case requestCompositeData(bodyData: Data, urlParameters: [String: JSONValue])
    /// Body parameters with their encoding plus URL-encoded query parameters.
    case requestCompositeParameters(
        bodyParameters: [String: JSONValue], bodyEncoding: any ParameterEncoding, urlParameters: [String: JSONValue])
}
