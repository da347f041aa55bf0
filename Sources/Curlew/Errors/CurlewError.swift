// Curlew — the one error type of the provider layer.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything that can go wrong between a target and a mapped value.
///
/// Moya's `MoyaError` cases, plus ``transport(_:)`` for the engine's failures (including
/// cancellation). Each case carries the response when there was one.
// `indirect`: one reference wide, so every `Result` and async frame that may carry an error stays
// small on the success path; the box is only paid when an error is made.
public indirect enum CurlewError: Error, Sendable {
    /// The body could not be turned into JSON.
    case jsonMapping(ApiResponse)
    /// The body (or the value at the key path) could not be turned into a string.
    case stringMapping(ApiResponse)
    /// The body could not be decoded into the requested type.
    case objectMapping(any Error, ApiResponse)
    /// An `Encodable` request body could not be encoded. Nothing was sent.
    case encodableMapping(any Error)
    /// The status code was not accepted by a filter or by the target's validation.
    case statusCode(ApiResponse)
    /// A failure from elsewhere (a request closure, a plugin), with the response if there was one.
    case underlying(any Error, ApiResponse?)
    /// The endpoint could not be turned into a request (a URL that cannot be built, a bad header). Nothing was sent.
    case requestMapping(String)
    /// The parameters could not be encoded into the request. Nothing was sent.
    case parameterEncoding(any Error)
    /// A multipart form could not be built: no parts, a method that carries no form, a bad boundary or
    /// MIME type, an unreadable file.
    case multipartEncoding(MultipartEncodingError)
    /// The transport failed: no complete response arrived (connection, DNS, TLS, timeouts, limits,
    /// cancellation, shutdown).
    case transport(TransportError)
    /// An event stream ended with a failure of its own: the server answered 204, another status or
    /// content type, or sent a line or an event over the policy's limits. (Its transport failures are
    /// ``transport(_:)``.)
    case eventStream(EventStreamError)

    /// The response involved, when there was one.
    public var response: ApiResponse? {
        switch self {
        case .jsonMapping(let response), .stringMapping(let response), .objectMapping(_, let response),
            .statusCode(let response):
            response
        case .underlying(_, let response):
            response
        case .encodableMapping, .requestMapping, .parameterEncoding, .multipartEncoding, .transport, .eventStream:
            nil
        }
    }

    /// True when the calling task was cancelled.
    public var isCancellation: Bool {
        switch self {
        case .transport(let error): error.code == .cancelled
        case .eventStream(let error): error.isCancellation
        case .underlying(let error, _): error is CancellationError
        default: false
        }
    }
}

extension CurlewError: CustomStringConvertible, LocalizedError {
    /// What went wrong, in words. For ``underlying(_:_:)`` it is the wrapped error's own message, as
    /// Moya's `errorDescription` is: its `errorDescription` (`LocalizedError`), a Foundation `NSError`'s
    /// localized description, or else its description.
    public var description: String {
        switch self {
        case .jsonMapping(let response): "Failed to map data to JSON (status \(response.statusCode))."
        case .stringMapping(let response): "Failed to map data to a String (status \(response.statusCode))."
        case .objectMapping(let error, let response):
            "Failed to map data to a Decodable object (status \(response.statusCode)): \(error)"
        case .encodableMapping(let error): "Failed to encode Encodable object into data: \(error)"
        case .statusCode(let response): "Status code didn't fall within the given range: \(response.statusCode)."
        case .underlying(let error, _): ErrorMessage.text(of: error)
        case .requestMapping(let reason): "Failed to map Endpoint to a request: \(reason)"
        case .parameterEncoding(let error): "Failed to encode parameters for a request: \(error)"
        case .multipartEncoding(let error): "Failed to encode a multipart form: \(error)"
        case .transport(let error): error.description
        case .eventStream(let error): error.description
        }
    }

    /// The same text as ``description``, so `localizedDescription` reads well too.
    public var errorDescription: String? { description }
}
