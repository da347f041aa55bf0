// Curlew — what a stubbed endpoint answers.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The answer a stubbed request gets.
public enum EndpointSampleResponse: Sendable {
    /// A status code and body.
    case networkResponse(Int, Data)
    /// A full response: status code, header fields and body (Moya's `.response(HTTPURLResponse, Data)`).
    case response(status: Int, headers: [String: String], data: Data)
    /// A failure, as if the request could not be sent or no response arrived (e.g. a timeout). Thrown as
    /// the real failure would be: a ``/CurlewEngine/TransportError`` as ``CurlewError/transport(_:)``, a
    /// ``CurlewError`` as it is, anything else as ``CurlewError/underlying(_:_:)``.
    case networkError(any Error)
}
