// Curlew — the endpoint a target gets when nobody customises it.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Endpoint {
    /// The endpoint Curlew makes for a target by default: ``defaultURL(for:)``, the target's method,
    /// task and headers, and `sampleData` as a 200 sample response.
    ///
    /// Providers use it unless given an endpoint closure; closures usually start from it and adjust,
    /// e.g. `Endpoint.default(for: target).adding(newHTTPHeaderFields: ...)`.
    ///
    /// - Parameter target: The target.
    /// - Returns: Its endpoint.
    public static func `default`<Target: TargetType>(for target: Target) -> Endpoint {
        Endpoint(
            url: defaultURL(for: target), sampleResponseClosure: { .networkResponse(200, target.sampleData) },
            method: target.method, task: target.task, httpHeaderFields: target.headers)
    }

    /// The target's `baseURL` joined with its `path`, as `URL.appendingPathComponent` would join them.
    ///
    /// An empty path gives the base URL unchanged (no trailing `/` is added). Otherwise exactly one `/`
    /// separates the two, and characters a path cannot hold (space, `?`, `#`, non-ASCII...) are
    /// percent-escaped, so a path never smuggles in a query; escapes already in the path (`%20`) are
    /// kept. A query or fragment on the base URL stays after the joined path.
    ///
    /// - Parameter target: The target.
    /// - Returns: The full URL, e.g. `https://api.github.com/users/octocat`.
    public static func defaultURL(for target: some TargetType) -> String {
        let base = target.baseURL.absoluteString
        guard !target.path.isEmpty else { return base }
        let split = base.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? base.endIndex
        let head = String(base[..<split])
        let path = PercentEscaping.escape(target.path, keepingEscapes: true, allowed: PercentEscaping.isPathAllowed)
        let joined: String
        switch (head.hasSuffix("/"), path.hasPrefix("/")) {
        case (true, true): joined = head + String(path.dropFirst())
        case (false, false): joined = head + "/" + path
        default: joined = head + path
        }
        return joined + base[split...]
    }
}
