// Curlew — one provider for several target types.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Wraps a target of any type, so one `Provider<MultiTarget>` can serve several APIs.
public struct MultiTarget: TargetType {
    /// The wrapped target.
    public let target: any TargetType

    /// Wraps `target`.
    public init(_ target: any TargetType) {
        self.target = target
    }

    public var baseURL: URL { target.baseURL }
    public var path: String { target.path }
    public var method: HTTPMethod { target.method }
    public var task: RequestTask { target.task }
    public var headers: [String: String]? { target.headers }
    public var sampleData: Data { target.sampleData }
    public var validationType: ValidationType { target.validationType }
}
