// Curlew — one provider for several target types.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Wraps a target of any type, so one `Provider<MultiTarget>` can serve several APIs.
///
/// Every requirement forwards to the wrapped target, including ``AccessTokenAuthorizable/authorizationType``
/// (nil when the wrapped target does not conform). The shipped plugins hand their closures the wrapped
/// target, so `switch target as? MyAPI` works inside them; switch on ``target`` to recover it yourself.
public struct MultiTarget: TargetType, AccessTokenAuthorizable {
    /// The wrapped target.
    public let target: any TargetType

    /// Wraps a target.
    ///
    /// - Parameter target: The target every property forwards to.
    public init(_ target: any TargetType) {
        // Wrapping twice would hide the real target from plugins; keep one level.
        self.target = Self.unwrapped(target)
    }

    /// The wrapped target's base URL.
    public var baseURL: URL { target.baseURL }
    /// The wrapped target's path.
    public var path: String { target.path }
    /// The wrapped target's method.
    public var method: HTTPRequest.Method { target.method }
    /// The wrapped target's task.
    public var task: RequestTask { target.task }
    /// The wrapped target's header fields.
    public var headers: [String: String]? { target.headers }
    /// The wrapped target's sample data.
    public var sampleData: Data { target.sampleData }
    /// The wrapped target's validation.
    public var validationType: ValidationType { target.validationType }
    /// The wrapped target's transfer options.
    public var transferOptions: TransferOptions { target.transferOptions }
    /// The wrapped target's redirect policy.
    public var redirectPolicy: RedirectPolicy? { target.redirectPolicy }
    /// The wrapped target's download options.
    public var downloadOptions: DownloadOptions { target.downloadOptions }
    /// The wrapped target's authorisation, or nil when it does not conform to ``AccessTokenAuthorizable``.
    public var authorizationType: AuthorizationType? {
        (target as? any AccessTokenAuthorizable)?.authorizationType
    }

    /// The target inside a ``MultiTarget``, or `target` itself.
    ///
    /// - Parameter target: A target, wrapped or not.
    /// - Returns: The target the caller wrote.
    public static func unwrapped(_ target: any TargetType) -> any TargetType {
        (target as? MultiTarget)?.target ?? target
    }
}
