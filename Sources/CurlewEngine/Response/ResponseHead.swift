// Curlew — the head of a streamed response: everything but the body.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// The status, header fields and facts of a response whose body is read as it arrives (see
/// ``CurlSession/perform(_:isolation:_:)``).
///
/// A value type: copies are cheap (the fields are parsed from the received head the first time they
/// are read, on the reader's thread, and kept).
public struct ResponseHead: Sendable {
    /// The status code of the final response.
    public var status: HTTPResponse.Status
    /// The URL the response came from (the last hop's, after redirects).
    public var effectiveURL: String
    /// The protocol version of the response.
    public var httpVersion: HTTPVersion
    /// Whether the request went over a connection that was already open.
    public var connectionReused: Bool
    /// The redirects followed before this response, in order; empty when there was none.
    public var redirects: [RedirectStep]
    /// When each phase of the transfer completed, up to the head: ``TransferTimings/total`` is the time
    /// until the head was complete.
    public var timings: TransferTimings
    /// For a redirect response: its `Location`, resolved against the URL requested.
    public var redirectURL: String?

    private var assignedFields: HTTPFields?
    private let receivedHead: ReceivedHead?
    let hasLocation: Bool
    /// The `Content-Length` the server announced, if any (for the body as sent, before any decoding).
    let contentLength: Int?

    /// Every header field of the response, in order.
    public var headerFields: HTTPFields {
        get { assignedFields ?? receivedHead?.fields ?? [:] }
        set { assignedFields = newValue }
    }

    /// Creates a head from its parts.
    public init(
        status: HTTPResponse.Status, headerFields: HTTPFields = [:], effectiveURL: String = "",
        httpVersion: HTTPVersion = .none, connectionReused: Bool = false, redirects: [RedirectStep] = [],
        timings: TransferTimings = .zero
    ) {
        self.status = status
        self.effectiveURL = effectiveURL
        self.httpVersion = httpVersion
        self.connectionReused = connectionReused
        self.redirects = redirects
        self.timings = timings
        assignedFields = headerFields
        receivedHead = nil
        hasLocation = headerFields[.location] != nil
        contentLength = headerFields[.contentLength].flatMap { Int($0) }
    }

    /// The head of a complete response: its status, fields (still unparsed when they were) and facts.
    public init(_ response: TransportResponse) {
        status = response.status
        effectiveURL = response.effectiveURL
        httpVersion = response.httpVersion
        connectionReused = response.connectionReused
        redirects = response.redirects
        timings = response.timings
        redirectURL = response.redirectURL
        receivedHead = response.receivedHead
        assignedFields = receivedHead == nil ? response.assignedFields : nil
        hasLocation = response.hasLocation || (receivedHead == nil && response.assignedFields[.location] != nil)
        contentLength = response.body.count
    }

    /// A head from the network, whose fields stay unparsed until read.
    init(
        status: HTTPResponse.Status, head: ReceivedHead, effectiveURL: String, httpVersion: HTTPVersion,
        connectionReused: Bool, timings: TransferTimings, redirectURL: String?, hasLocation: Bool, contentLength: Int?
    ) {
        self.status = status
        self.effectiveURL = effectiveURL
        self.httpVersion = httpVersion
        self.connectionReused = connectionReused
        self.redirects = []
        self.timings = timings
        self.redirectURL = redirectURL
        assignedFields = nil
        receivedHead = head
        self.hasLocation = hasLocation
        self.contentLength = contentLength
    }
}

extension TransportResponse {
    /// A response made of a streamed response's head and `body` (empty for a head alone).
    public init(head: ResponseHead, body: Data = Data()) {
        self.init(
            status: head.status, headerFields: head.headerFields, body: body, effectiveURL: head.effectiveURL,
            httpVersion: head.httpVersion, connectionReused: head.connectionReused, timings: head.timings)
        redirects = head.redirects
        redirectURL = head.redirectURL
    }
}
