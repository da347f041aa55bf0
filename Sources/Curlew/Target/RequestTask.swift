// Curlew — what a target's request sends.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a request sends: nothing, raw data, an `Encodable` as JSON, or parameters with an encoding.
///
/// This is Moya's `Task`. Curlew names it `RequestTask` because `Task` is Swift's unit of concurrency,
/// and a target's `task` property would otherwise shadow it in every file that uses both.
///
/// `JSONEncoder` is `Sendable` in swift-foundation (its settings are guarded by a lock), so a
/// configured encoder can travel with the task. Don't mutate it after handing it over.
public enum RequestTask: Sendable {
    /// No body and no parameters.
    case requestPlain
    /// This data as the body, with no `Content-Type` added.
    case requestData(Data)
    /// This value as a JSON body, encoded with default strategies and sorted keys, and
    /// `Content-Type: application/json` unless set.
    case requestJSONEncodable(any Encodable & Sendable)
    /// This value as a JSON body encoded by the given encoder, and `Content-Type: application/json`
    /// unless set.
    case requestCustomJSONEncodable(any Encodable & Sendable, encoder: JSONEncoder)
    /// Parameters, placed by the encoding (query string, body, or wherever a custom encoding puts them).
    case requestParameters(parameters: [String: JSONValue], encoding: any ParameterEncoding)
    /// This data as the body, plus parameters URL-encoded into the query string.
    case requestCompositeData(bodyData: Data, urlParameters: [String: JSONValue])
    /// Body parameters with their encoding, plus parameters URL-encoded into the query string.
    ///
    /// The body encoding must write the body: a ``URLEncoding`` other than ``URLEncoding/httpBody``
    /// is refused with ``CurlewError/parameterEncoding(_:)`` (put those parameters in `urlParameters`).
    case requestCompositeParameters(
        bodyParameters: [String: JSONValue], bodyEncoding: any ParameterEncoding, urlParameters: [String: JSONValue])
}
