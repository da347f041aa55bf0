// Curlew — a complete response as the engine received it.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// A complete HTTP response received by the engine.
///
/// Named `TransportResponse` so it does not clash with the `Response` types of server frameworks
/// (Vapor, Hummingbird) or with Curlew's own provider-level ``Response``.
public struct TransportResponse: Sendable {
    /// The status code of the final response.
    public var status: HTTPResponse.Status
    /// Every header field of the final response, in order; repeated fields are kept and names compare
    /// case-insensitively.
    public var headerFields: HTTPFields
    /// The response body, decoded from its `Content-Encoding`.
    public var body: Data
    /// The URL the response came from.
    public var effectiveURL: String
    /// The protocol version of the response.
    public var httpVersion: HTTPVersion
    /// Whether the request went over a connection that was already open.
    public var connectionReused: Bool
    /// When each phase of the transfer completed.
    public var timings: TransferTimings

    /// Creates a response from its parts.
    public init(
        status: HTTPResponse.Status, headerFields: HTTPFields = [:], body: Data = Data(),
        effectiveURL: String = "", httpVersion: HTTPVersion = .none, connectionReused: Bool = false,
        timings: TransferTimings = .zero
    ) {
        self.status = status
        self.headerFields = headerFields
        self.body = body
        self.effectiveURL = effectiveURL
        self.httpVersion = httpVersion
        self.connectionReused = connectionReused
        self.timings = timings
    }
}
