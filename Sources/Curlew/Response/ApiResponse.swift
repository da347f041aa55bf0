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
    /// How a response was taken, which says where its body is.
    public enum Origin: Sendable, Hashable {
        /// Received over the network with its whole body in ``ApiResponse/data`` (``ApiResponse/transportResponse``
        /// holds what the engine received).
        case network
        /// Made without a transfer, with its body in ``ApiResponse/data``: a stub's sample response, or
        /// one built by hand (by a plugin, a test).
        case sample
        /// The head of a response whose body is read as it arrives (``Provider/stream(_:isolation:_:)``,
        /// an event stream's attempt): ``ApiResponse/data`` is empty.
        case streamedHead
        /// A download task's response: the body is in the file at ``ApiResponse/fileURL``.
        case download
    }

    /// The fields live in one immutable object: an `ApiResponse` is then one reference wide, so the
    /// results, errors and async frames that carry it stay small and copying it is one retain.
    private final class Storage: Sendable {
        let statusCode: Int
        let data: Data
        let request: TransportRequest?
        /// Nil when the fields are the transport response's, which parses them only when read.
        let headerFields: HTTPFields?
        let transportResponse: TransportResponse?
        let origin: Origin
        let download: DownloadResponse?

        init(
            statusCode: Int, data: Data, request: TransportRequest?, headerFields: HTTPFields?,
            transportResponse: TransportResponse?, origin: Origin, download: DownloadResponse? = nil
        ) {
            self.statusCode = statusCode
            self.data = data
            self.request = request
            self.headerFields = headerFields
            self.transportResponse = transportResponse
            self.origin = origin
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
    /// What the engine received, when the response came over the network (nil for stubs and responses
    /// built by hand).
    public var transportResponse: TransportResponse? { storage.transportResponse }
    /// How the response was taken: where its body is.
    public var origin: Origin { storage.origin }
    /// Whether this is the head of a streamed response (``Origin/streamedHead``): its body is read as it
    /// arrives, so ``data`` is empty.
    public var isStreamed: Bool { storage.origin == .streamedHead }

    /// Creates a response: ``Origin/network`` with a `transportResponse`, ``Origin/sample`` without.
    public init(
        statusCode: Int, data: Data, request: TransportRequest? = nil, headerFields: HTTPFields = [:],
        transportResponse: TransportResponse? = nil
    ) {
        storage = Storage(
            statusCode: statusCode, data: data, request: request, headerFields: headerFields,
            transportResponse: transportResponse, origin: transportResponse == nil ? .sample : .network)
    }

    /// Creates a response from what the engine received for `request` (``Origin/network``).
    public init(_ response: TransportResponse, request: TransportRequest) {
        storage = Storage(
            statusCode: response.status.code, data: response.body, request: request, headerFields: nil,
            transportResponse: response, origin: .network)
    }

    /// The head of a streamed response to `request` (``Origin/streamedHead``): no data.
    ///
    /// - Parameters:
    ///   - head: The response head.
    ///   - request: The request it answers.
    ///   - fromNetwork: Whether the head came over the network (false for a stub's), which gives the
    ///     response a ``transportResponse``.
    public init(head: ResponseHead, request: TransportRequest, fromNetwork: Bool = true) {
        storage = Storage(
            statusCode: head.status.code, data: Data(), request: request, headerFields: fromNetwork ? nil : head.headerFields,
            transportResponse: fromNetwork ? TransportResponse(head: head) : nil, origin: .streamedHead)
    }

    /// The response of a download task (``Origin/download``): its head, with the body in the file at
    /// `download.filePath`.
    ///
    /// - Parameters:
    ///   - download: What the download wrote, with the response head.
    ///   - request: The request it answers.
    ///   - fromNetwork: Whether the response came over the network (false for a stub's sample data
    ///     written to the file), which gives the response a ``transportResponse``.
    public init(download: DownloadResponse, request: TransportRequest, fromNetwork: Bool = true) {
        storage = Storage(
            statusCode: download.head.status.code, data: Data(), request: request,
            headerFields: fromNetwork ? nil : download.head.headerFields,
            transportResponse: fromNetwork ? TransportResponse(head: download.head) : nil, origin: .download,
            download: download)
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
            return try FileContents.read(atPath: download.filePath)
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
