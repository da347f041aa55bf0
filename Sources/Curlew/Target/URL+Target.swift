// Curlew — a target's URL as a Foundation URL.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension URL {
    /// The target's base URL joined with its path, as the default endpoint builds it
    /// (``Endpoint/defaultURL(for:)``): Moya's `URL(target:)`.
    ///
    /// ```swift
    /// let endpointClosure = { @Sendable (target: GitHub) -> Endpoint in
    ///     Endpoint(
    ///         url: URL(target: target).absoluteString, sampleResponseClosure: { .networkResponse(200, target.sampleData) },
    ///         method: target.method, task: target.task, httpHeaderFields: target.headers)
    /// }
    /// ```
    ///
    /// - Parameter target: The target.
    public init(target: some TargetType) {
        // The joined URL is the base URL's text with a percent-escaped path, which always parses; should it
        // not, Foundation's own joining gives the same URL.
        self = URL(string: Endpoint.defaultURL(for: target))
            ?? target.baseURL.appending(path: target.path, directoryHint: .notDirectory)
    }
}
