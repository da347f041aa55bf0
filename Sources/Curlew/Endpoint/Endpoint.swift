// Curlew — a target resolved into a concrete request description.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A target turned into what will be sent: URL, method, header fields, task, and the sample response
/// used when stubbing.
///
/// Endpoints compare equal when they would produce the same request (URL, method, header fields and
/// body), since closures cannot be compared.
public struct Endpoint: Sendable {
    /// The produces the sample response for stubbing.
    public typealias SampleResponseClosure = @Sendable () -> EndpointSampleResponse

    /// The full URL.
    public let url: String
    /// The sample response used when stubbing.
    public let sampleResponseClosure: SampleResponseClosure
    /// The method.
    public let method: HTTPMethod
    /// What the request sends.
    public let task: RequestTask
    /// The header fields.
    public let httpHeaderFields: [String: String]?

    /// Creates an endpoint.
    public init(
        url: String, sampleResponseClosure: @escaping SampleResponseClosure, method: HTTPMethod, task: RequestTask,
        httpHeaderFields: [String: String]?
    ) {
        self.url = url
        self.sampleResponseClosure = sampleResponseClosure
        self.method = method
        self.task = task
        self.httpHeaderFields = httpHeaderFields
    }

    /// A copy with these header fields added; new values replace existing ones of the same name.
    public func adding(newHTTPHeaderFields: [String: String]) -> Endpoint {
        let merged = (httpHeaderFields ?? [:]).merging(newHTTPHeaderFields) { _, new in new }
        return Endpoint(url: url, sampleResponseClosure: sampleResponseClosure, method: method, task: task, httpHeaderFields: merged)
    }

    /// A copy with another task.
    public func replacing(task: RequestTask) -> Endpoint {
        Endpoint(url: url, sampleResponseClosure: sampleResponseClosure, method: method, task: task, httpHeaderFields: httpHeaderFields)
    }

    /// The endpoint Curlew makes for a target by default: `baseURL` joined with `path`, the target's
    /// method, task and headers, and `sampleData` as a 200 sample response.
    public static func `default`<Target: TargetType>(for target: Target) -> Endpoint {
        Endpoint(
            url: defaultURL(for: target), sampleResponseClosure: { .networkResponse(200, target.sampleData) },
            method: target.method, task: target.task, httpHeaderFields: target.headers)
    }

    /// `baseURL` followed by `path` with exactly one `/` between them; an empty path leaves the base URL.
    public static func defaultURL(for target: some TargetType) -> String {
        let base = target.baseURL.absoluteString
        let path = target.path
        guard !path.isEmpty else { return base }
        switch (base.hasSuffix("/"), path.hasPrefix("/")) {
        case (true, true): return base + path.dropFirst()
        case (false, false): return base + "/" + path
        default: return base + path
        }
    }
}

extension Endpoint: Equatable, Hashable {
    public static func == (lhs: Endpoint, rhs: Endpoint) -> Bool {
        guard let left = try? lhs.urlRequest(), let right = try? rhs.urlRequest() else {
            return lhs.url == rhs.url && lhs.method == rhs.method && lhs.httpHeaderFields == rhs.httpHeaderFields
        }
        return left == right
    }

    public func hash(into hasher: inout Hasher) {
        if let request = try? urlRequest() {
            hasher.combine(request)
        } else {
            hasher.combine(url)
            hasher.combine(method)
        }
    }
}
