// Curlew — an error response whose body did not decode into the error-message type.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A non-2xx response whose body is not the API's error-message format (an HTML 500 page, an empty
/// 502): the status code and raw body are kept, with a fallback message.
public struct UnexpectedApiError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The status code.
    public var statusCode: Int
    /// The raw body.
    public var body: Data
    /// A fallback explanation, e.g. `Unexpected response from the server (HTTP 500, text/html, 178 bytes)`.
    public var message: String
    /// Why the body did not decode as the error-message type.
    public var decodingFailure: String

    /// Creates the error.
    public init(statusCode: Int, body: Data, message: String, decodingFailure: String = "") {
        self.statusCode = statusCode
        self.body = body
        self.message = message
        self.decodingFailure = decodingFailure
    }

    public var description: String { message }
}
