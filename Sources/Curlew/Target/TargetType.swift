// Curlew — the protocol that describes one API call.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The method of a target: swift-http-types' `HTTPRequest.Method`, under Moya's name (`Moya.Method`
/// becomes `Curlew.Method`, or simply `Method`).
public typealias Method = HTTPRequest.Method

/// One call of an API: where it goes, how, and what it sends. Usually an enum with a case per call.
///
/// Targets cross from the caller into the provider's nonisolated work, so they must be `Sendable`;
/// an enum of value payloads is by construction.
public protocol TargetType: Sendable {
    /// The API's base URL, the same for every case, e.g. `https://api.github.com`.
    ///
    /// Use one target type (and one provider) per base URL.
    var baseURL: URL { get }
    /// The path appended to ``baseURL``, e.g. `/users/octocat`; empty for the base URL itself.
    var path: String { get }
    /// The HTTP method.
    var method: HTTPRequest.Method { get }
    /// What the request sends (nothing, data, an `Encodable`, parameters...).
    var task: RequestTask { get }
    /// Header fields to send, or nil for none.
    var headers: [String: String]? { get }
    /// A sample response body, used when stubbing and in tests. Empty by default.
    var sampleData: Data { get }
    /// Which status codes count as success. ``ValidationType/none`` by default.
    var validationType: ValidationType { get }
    /// Session settings this target's requests override: connect and idle timeouts, the response body
    /// limit, a client certificate, public-key pins, a Unix socket. None by default.
    var transferOptions: TransferOptions { get }
    /// How this target's redirects are followed; nil (the default) keeps the session's policy.
    var redirectPolicy: RedirectPolicy? { get }
    /// How a download task (``RequestTask/downloadDestination(_:)-enum.case``,
    /// ``RequestTask/downloadParameters(parameters:encoding:destination:)-enum.case``) handles its file: resuming a
    /// partial file, keeping one when the download fails, syncing it to the disk. The defaults otherwise.
    var downloadOptions: DownloadOptions { get }
}

extension TargetType {
    /// No sample body: an empty `Data`.
    public var sampleData: Data { Data() }
    /// No validation: every status code is accepted.
    public var validationType: ValidationType { .none }
    /// No overrides: the session's settings.
    public var transferOptions: TransferOptions { TransferOptions() }
    /// The session's redirect policy.
    public var redirectPolicy: RedirectPolicy? { nil }
    /// The default download options: from the first byte, nothing kept on failure, no `fsync`.
    public var downloadOptions: DownloadOptions { DownloadOptions() }
}
