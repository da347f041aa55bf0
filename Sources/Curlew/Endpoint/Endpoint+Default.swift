// Curlew — the endpoint a target gets when nobody customises it.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Endpoint {
    /// The endpoint Curlew makes for a target by default: ``defaultURL(for:)``, the target's method,
    /// task, headers, transfer options and redirect policy, and `sampleData` as a 200 sample response.
    ///
    /// Providers use it unless given an endpoint closure; closures usually start from it and adjust,
    /// e.g. `Endpoint.default(for: target).adding(newHTTPHeaderFields: ...)`.
    ///
    /// - Parameter target: The target.
    /// - Returns: Its endpoint.
    public static func `default`<Target: TargetType>(for target: Target) -> Endpoint {
        Endpoint(
            url: defaultURL(for: target), sampleResponseClosure: { .networkResponse(200, target.sampleData) },
            method: target.method, task: target.task, httpHeaderFields: target.headers,
            transferOptions: target.transferOptions, redirectPolicy: target.redirectPolicy)
    }

    /// The endpoint ``default(for:)`` makes, but with `baseURL` in place of the target's base URL: the
    /// same targets against another deployment (staging, a local test server).
    ///
    /// - Parameters:
    ///   - target: The target.
    ///   - baseURL: The base URL to join the target's path to.
    /// - Returns: Its endpoint.
    public static func `default`<Target: TargetType>(for target: Target, baseURL: URL) -> Endpoint {
        Endpoint(
            url: defaultURL(for: target, baseURL: baseURL),
            sampleResponseClosure: { .networkResponse(200, target.sampleData) }, method: target.method,
            task: target.task, httpHeaderFields: target.headers, transferOptions: target.transferOptions,
            redirectPolicy: target.redirectPolicy)
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
        defaultURL(for: target, baseURL: target.baseURL)
    }

    /// `baseURL` joined with the target's `path`, by the rules of ``defaultURL(for:)``.
    ///
    /// - Parameters:
    ///   - target: The target whose path is joined.
    ///   - baseURL: The base URL used instead of the target's.
    /// - Returns: The full URL.
    public static func defaultURL(for target: some TargetType, baseURL: URL) -> String {
        let base = baseURL.absoluteString
        let rawPath = target.path
        guard !rawPath.isEmpty else { return base }
        // Every request of a target joins the same pair: the URL joined before, when there is one.
        if let joined = EndpointURLCache.joined(base, rawPath) { return joined }
        var path = PercentEscaping.escape(rawPath, keepingEscapes: true, allowed: PercentEscaping.isPathAllowed)
        var head = base
        // On contiguous bytes: the URL is ASCII (Foundation's URL keeps it percent-encoded), and this
        // runs for every new pair, where String indices cost tens of instructions per character.
        let url = head.withUTF8 { head in path.withUTF8 { path in join(head, path) } }
        EndpointURLCache.keep(joined: url, base: base, path: rawPath)
        return url
    }

    /// The endpoint with `newBase` in place of `oldBase` at the start of its URL (a provider's `baseURL`),
    /// joined by the rules of ``defaultURL(for:)``; unchanged when its URL does not start with `oldBase`
    /// followed by a path, query or fragment (a closure that built its URL from elsewhere).
    func rebased(from oldBase: URL, to newBase: URL) -> Endpoint {
        let old = oldBase.absoluteString
        guard url.hasPrefix(old) else { return self }
        var rest = String(url.utf8.dropFirst(old.utf8.count)) ?? ""
        let atBoundary =
            rest.isEmpty || old.hasSuffix("/") || rest.hasPrefix("/") || rest.hasPrefix("?") || rest.hasPrefix("#")
        guard atBoundary else { return self }
        var base = newBase.absoluteString
        let rebased: String
        if rest.isEmpty {
            rebased = base
        } else if rest.hasPrefix("?") || rest.hasPrefix("#") {
            rebased = base + rest
        } else {
            rebased = base.withUTF8 { head in rest.withUTF8 { path in Self.join(head, path) } }
        }
        return Endpoint(
            url: rebased, sampleResponseClosure: sampleResponseClosure, method: method, task: task,
            httpHeaderFields: httpHeaderFields, transferOptions: transferOptions, redirectPolicy: redirectPolicy)
    }

    /// `base` (up to any query or fragment) + exactly one `/` + `path` + the query or fragment.
    private static func join(_ base: UnsafeBufferPointer<UInt8>, _ path: UnsafeBufferPointer<UInt8>) -> String {
        var split = base.count
        for index in base.indices where base[index] == UInt8(ascii: "?") || base[index] == UInt8(ascii: "#") {
            split = index
            break
        }
        let headEndsWithSlash = split > 0 && base[split - 1] == UInt8(ascii: "/")
        let pathStartsWithSlash = path.first == UInt8(ascii: "/")
        let pathStart = headEndsWithSlash && pathStartsWithSlash ? 1 : 0
        let addSlash = !headEndsWithSlash && !pathStartsWithSlash
        let total = split + (addSlash ? 1 : 0) + (path.count - pathStart) + (base.count - split)
        return String(unsafeUninitializedCapacity: total) { out in
            var position = 0
            func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
                guard let source = bytes.baseAddress, let target = out.baseAddress, !bytes.isEmpty else { return }
                (target + position).update(from: source, count: bytes.count)
                position += bytes.count
            }
            copy(UnsafeBufferPointer(rebasing: base[..<split]))
            if addSlash {
                out[position] = UInt8(ascii: "/")
                position += 1
            }
            copy(UnsafeBufferPointer(rebasing: path[pathStart...]))
            copy(UnsafeBufferPointer(rebasing: base[split...]))
            return position
        }
    }
}
