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
    /// The fields live in one immutable object: an `ApiResponse` is then one reference wide, so the
    /// results, errors and async frames that carry it stay small and copying it is one retain.
    private final class Storage: Sendable {
        let statusCode: Int
        let data: Data
        let request: TransportRequest?
        /// Nil when the fields are the transport response's, which parses them only when read.
        let headerFields: HTTPFields?
        let transportResponse: TransportResponse?
        let isStreamed: Bool
        let download: DownloadResponse?

        init(
            statusCode: Int, data: Data, request: TransportRequest?, headerFields: HTTPFields?,
            transportResponse: TransportResponse?, isStreamed: Bool = false, download: DownloadResponse? = nil
        ) {
            self.statusCode = statusCode
            self.data = data
            self.request = request
            self.headerFields = headerFields
            self.transportResponse = transportResponse
            self.isStreamed = isStreamed
            self.download = download
        }
    }

    private let storage: Storage

    /// The HTTP status code.
    public var statusCode: Int { storage.statusCode }
    /// The response body.
    public var data: Data { storage.data }
    /// The request that produced this response (nil for responses built by hand).
    public var request: TransportRequest? { storage.request }
    /// The response head's header fields.
    public var headerFields: HTTPFields { storage.headerFields ?? storage.transportResponse?.headerFields ?? [:] }
    /// What the engine received, when the response came over the network (nil for stubs).
    public var transportResponse: TransportResponse? { storage.transportResponse }
    /// Whether this is the head of a streamed response (``Provider/stream(_:isolation:_:)``): its body is
    /// read as it arrives, so ``data`` is empty.
    public var isStreamed: Bool { storage.isStreamed }

    /// Creates a response.
    public init(
        statusCode: Int, data: Data, request: TransportRequest? = nil, headerFields: HTTPFields = [:],
        transportResponse: TransportResponse? = nil
    ) {
        storage = Storage(
            statusCode: statusCode, data: data, request: request, headerFields: headerFields,
            transportResponse: transportResponse)
    }

    /// Creates a response from what the engine received for `request`.
    public init(_ response: TransportResponse, request: TransportRequest) {
        storage = Storage(
            statusCode: response.status.code, data: response.body, request: request, headerFields: nil,
            transportResponse: response)
    }

    /// The head of a streamed response to `request`: no data, ``isStreamed`` set.
    /// A head that did not come over the network (HTTP version ``/CurlewEngine/HTTPVersion/none``: a
    /// stub) has no ``transportResponse``.
    public init(head: ResponseHead, request: TransportRequest) {
        let fromNetwork = head.httpVersion != .none
        storage = Storage(
            statusCode: head.status.code, data: Data(), request: request, headerFields: fromNetwork ? nil : head.headerFields,
            transportResponse: fromNetwork ? TransportResponse(head: head) : nil, isStreamed: true)
    }

    /// The response of a download task: its head, with the body in the file at `download.filePath`.
    /// A head that did not come over the network (a stub) has no ``transportResponse``.
    public init(download: DownloadResponse, request: TransportRequest) {
        let fromNetwork = download.head.httpVersion != .none
        storage = Storage(
            statusCode: download.head.status.code, data: Data(), request: request,
            headerFields: fromNetwork ? nil : download.head.headerFields,
            transportResponse: fromNetwork ? TransportResponse(head: download.head) : nil, download: download)
    }

    /// Where a download task's body was written; nil for other responses. ``data`` is then empty: read
    /// the file, or map the response (``map(_:atKeyPath:using:failsOnEmptyData:)``, ``mapJSON(failsOnEmptyData:)``,
    /// ``mapString(atKeyPath:)`` and the typed calls read it).
    public var fileURL: URL? { storage.download.map { URL(fileURLWithPath: $0.filePath) } }

    /// What a download task wrote (the file, its size, the bytes resumed from a partial file); nil for
    /// other responses.
    public var download: DownloadResponse? { storage.download }

    /// The body: ``data``, or the contents of a download's file.
    ///
    /// - Throws: ``CurlewError/underlying(_:_:)`` when the downloaded file cannot be read.
    public func bodyData() throws(CurlewError) -> Data {
        guard let download = storage.download else { return storage.data }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: download.filePath))
        } catch {
            throw .underlying(error, self)
        }
    }

    /// The redirects followed before this response (each URL requested and the 3xx it answered with);
    /// empty when there was none, and for stubs.
    public var redirectChain: [RedirectStep] { transportResponse?.redirects ?? [] }

    /// The URL the response came from: the last hop's URL after redirects, the request's URL for stubs.
    public var finalURL: String? { transportResponse?.effectiveURL ?? request?.url }

    /// The engine's timings (all zero for stubbed responses).
    public var timings: TransferTimings { transportResponse?.timings ?? .zero }

    public var description: String {
        if let download = storage.download {
            return "Status Code: \(statusCode), File: \(download.filePath) (\(download.fileSize) bytes)"
        }
        return isStreamed ? "Status Code: \(statusCode), Streamed" : "Status Code: \(statusCode), Data Length: \(data.count)"
    }

    public var debugDescription: String {
        var text = description
        if let request { text += ", Request: \(request.method.rawValue) \(request.url)" }
        if !headerFields.isEmpty { text += ", Headers: \(headerFields.map { "\($0.name): \($0.value)" })" }
        return text
    }

    /// Whether two responses are the same response: status code, body (for downloads, the file's path,
    /// size and resumed bytes)
    /// and response head (header fields) are equal. The request that produced them and the engine's
    /// timings are not compared, as Moya's documentation describes `Response` equality.
    public static func == (lhs: ApiResponse, rhs: ApiResponse) -> Bool {
        lhs.statusCode == rhs.statusCode && lhs.data == rhs.data && lhs.headerFields == rhs.headerFields
            && lhs.storage.download?.filePath == rhs.storage.download?.filePath
            && lhs.storage.download?.fileSize == rhs.storage.download?.fileSize
            && lhs.storage.download?.resumedFrom == rhs.storage.download?.resumedFrom
    }
}
