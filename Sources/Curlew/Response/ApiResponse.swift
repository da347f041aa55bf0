// Curlew — a response as the provider layer hands it out.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The response to a target: status code, body, header fields, the request that produced it and the
/// engine's timings.
///
/// Moya calls this `Response`; Curlew names it `ApiResponse` so it does not clash with the `Response`
/// types of Vapor or Hummingbird in the same file.
public struct ApiResponse: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The HTTP status code.
    public let statusCode: Int
    /// The response body.
    public let data: Data
    /// The request that produced this response (nil for responses built by hand).
    public let request: TransportRequest?
    /// The response head's header fields.
    public let headerFields: HTTPFields
    /// What the engine received, when the response came over the network (nil for stubs).
    public let transportResponse: TransportResponse?

    /// Creates a response.
    public init(
        statusCode: Int, data: Data, request: TransportRequest? = nil, headerFields: HTTPFields = [:],
        transportResponse: TransportResponse? = nil
    ) {
        self.statusCode = statusCode
        self.data = data
        self.request = request
        self.headerFields = headerFields
        self.transportResponse = transportResponse
    }

    /// Creates a response from what the engine received for `request`.
    public init(_ response: TransportResponse, request: TransportRequest) {
        self.init(
            statusCode: response.status.code, data: response.body, request: request,
            headerFields: response.headerFields, transportResponse: response)
    }

    /// The engine's timings (all zero for stubbed responses).
    public var timings: TransferTimings { transportResponse?.timings ?? .zero }

    public var description: String { "Status Code: \(statusCode), Data Length: \(data.count)" }

    public var debugDescription: String {
        var text = description
        if let request { text += ", Request: \(request.method.rawValue) \(request.url)" }
        if !headerFields.isEmpty { text += ", Headers: \(headerFields.map { "\($0.name): \($0.value)" })" }
        return text
    }

    public static func == (lhs: ApiResponse, rhs: ApiResponse) -> Bool {
        lhs.statusCode == rhs.statusCode && lhs.data == rhs.data && lhs.request == rhs.request
            && lhs.headerFields == rhs.headerFields
    }
}
