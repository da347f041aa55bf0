// Curlew — one provider for several target types.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Wraps a target of any type, so one `Provider<MultiTarget>` can serve several APIs.
///
/// Every requirement forwards to the wrapped target; switch on ``target`` to recover it.
public struct MultiTarget: TargetType {
    /// The wrapped target.
    public let target: any TargetType

    /// Wraps a target.
    ///
    /// - Parameter target: The target every property forwards to.
    public init(_ target: any TargetType) {
        self.target = target
    }

    /// The wrapped target's base URL.
    public var baseURL: URL { target.baseURL }
    /// The wrapped target's path.
    public var path: String { target.path }
    /// The wrapped target's method.
    public var method: HTTPMethod { target.method }
    /// The wrapped target's task.
    public var task: RequestTask { target.task }
    /// The wrapped target's header fields.
    public var headers: [String: String]? { target.headers }
    /// The wrapped target's sample data.
    public var sampleData: Data { target.sampleData }
    /// The wrapped target's validation.
    public var validationType: ValidationType { target.validationType }
}
