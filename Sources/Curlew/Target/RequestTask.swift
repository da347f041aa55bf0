// Curlew — what a target's request sends.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a request sends and how: nothing, raw data, an `Encodable` as JSON or parameters with an
/// encoding; a file or a multipart form to upload; or a response body to download to a file.
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
    /// The file at this file URL as the body, read while the request is sent (`Content-Length`, no
    /// `Content-Type` added). The file must be a readable regular file when the request is built, else
    /// ``CurlewError/transport(_:)`` with ``/CurlewEngine/TransportError/Code/invalidBody``.
    case uploadFile(URL)
    /// This form as a `multipart/form-data` body, encoded by Curlew, with `Content-Type` and its boundary
    /// set (replacing any the target gives). Only for methods that carry a form (POST, PUT, PATCH,
    /// CONNECT: `HTTPRequest.Method.supportsMultipart`).
    case uploadMultipart(MultipartFormData)
    /// This form as a `multipart/form-data` body, plus parameters URL-encoded into the query string.
    case uploadCompositeMultipart(MultipartFormData, urlParameters: [String: JSONValue])
    /// The response body downloaded to the file the destination chooses; the response's
    /// ``ApiResponse/fileURL`` says where it is.
    case downloadDestination(DownloadDestination)
    /// Parameters placed by the encoding, and the response body downloaded to the file the destination
    /// chooses.
    case downloadParameters(parameters: [String: JSONValue], encoding: any ParameterEncoding, destination: DownloadDestination)
}

extension RequestTask {
    /// Moya's spelling, `.downloadDestination { temporaryURL, response in … }`: the response body
    /// downloaded to the file the closure chooses, as ``/CurlewEngine/DownloadDestination``'s closure
    /// initializer takes it.
    ///
    /// ```swift
    /// case .export: .downloadDestination { _, response in
    ///     (exports.appending(path: response.suggestedFilename ?? "export.csv"), [.removePreviousFile])
    /// }
    /// ```
    public static func downloadDestination(
        _ choose: @escaping @Sendable (_ temporaryURL: URL, _ response: ResponseHead) async throws -> (
            destinationURL: URL, options: DownloadDestination.Options
        )
    ) -> RequestTask {
        .downloadDestination(DownloadDestination(choose))
    }

    /// Moya's spelling of ``downloadParameters(parameters:encoding:destination:)-enum.case`` with the destination
    /// written as a closure of the temporary URL and the response head.
    public static func downloadParameters(
        parameters: [String: JSONValue], encoding: any ParameterEncoding,
        destination: @escaping @Sendable (_ temporaryURL: URL, _ response: ResponseHead) async throws -> (
            destinationURL: URL, options: DownloadDestination.Options
        )
    ) -> RequestTask {
        .downloadParameters(parameters: parameters, encoding: encoding, destination: DownloadDestination(destination))
    }

    /// What the provider layer asks of a task's case before sending it.
    enum Shape: Sendable {
        /// ``requestPlain``: nothing to add to the request.
        case plain
        /// ``downloadDestination(_:)-enum.case`` or ``downloadParameters(parameters:encoding:destination:)-enum.case``.
        case download
        case other
    }

    /// The case of `task`, read once per endpoint: every switch on a task copies it, payload and all
    /// (its existential payloads make the enum one that is switched on through a copy).
    static func shape(of task: RequestTask) -> Shape {
        switch task {
        case .requestPlain: .plain
        case .downloadDestination, .downloadParameters: .download
        default: .other
        }
    }

    /// Where a download task's file goes; nil for other tasks.
    var downloadDestination: DownloadDestination? {
        switch self {
        case .downloadDestination(let destination), .downloadParameters(_, _, let destination): destination
        default: nil
        }
    }

    /// Which body a progress sequence's fraction follows: the request body for Moya's upload tasks (as
    /// Moya reads `uploadProgress` for them), the response body otherwise.
    var progressBasis: ProgressBasis {
        switch self {
        case .uploadFile, .uploadMultipart, .uploadCompositeMultipart: .requestBody
        default: .responseBody
        }
    }

    /// Whether the task uploads a file or a form, or downloads to a file: such requests are never shared
    /// by in-flight sharing.
    var isTransfer: Bool {
        switch self {
        case .uploadFile, .uploadMultipart, .uploadCompositeMultipart, .downloadDestination, .downloadParameters: true
        default: false
        }
    }
}
