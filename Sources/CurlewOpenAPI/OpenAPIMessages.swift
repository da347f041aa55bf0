// Curlew — a generated client's messages as the engine carries them: the URL from the server URL and the
// operation's path, the request body from its HTTPBody, the response body as one.

import Curlew
import CurlewEngine
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import OpenAPIRuntime

/// Joins a server URL and an operation's path.
enum OpenAPIURL {
    /// `base` without its query, fragment or trailing `/`, followed by `path` (which carries the
    /// operation's query), as swift-openapi's other transports join them.
    static func join(_ base: URL, _ path: String?) -> String {
        var url = base.absoluteString
        if let cut = url.firstIndex(where: { $0 == "?" || $0 == "#" }) { url.removeSubrange(cut...) }
        if url.hasSuffix("/") { url.removeLast() }
        guard let path, !path.isEmpty else { return url }
        return path.first == "/" ? url + path : url + "/" + path
    }

    /// Splits an absolute URL into its server (`scheme://authority`) and the path with its query, as
    /// the OpenAPI runtime hands them to a middleware; nil when `url` has no scheme and authority.
    static func split(_ url: String) -> (base: URL, path: String)? {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
        let authorityStart = url.index(colon, offsetBy: 3)
        let authorityEnd = url[authorityStart...].firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? url.endIndex
        guard let base = URL(string: String(url[..<authorityEnd])) else { return nil }
        var path = String(url[authorityEnd...])
        if let fragment = path.firstIndex(of: "#") { path.removeSubrange(fragment...) }
        if path.isEmpty || path.first == "?" { path = "/" + path }
        return (base, path)
    }
}

extension TransportRequest.Body {
    /// The body that sends `body`: read into memory first when it can be iterated again and its known
    /// length is at most `inMemoryLimit`, streamed otherwise (replayable only when it can be iterated
    /// again).
    ///
    /// - Throws: ``/Curlew/CurlewError``: the body's own failure while it was read into memory (as
    ///   ``/Curlew/CurlewError/underlying(_:_:)``), or a length it did not keep.
    static func from(_ body: HTTPBody?, inMemoryLimit: Int) async throws(CurlewError) -> TransportRequest.Body? {
        guard let body else { return nil }
        let length = body.knownLength
        let replayable = body.iterationBehavior == .multiple
        if replayable, let length, length <= inMemoryLimit {
            var data = Data(capacity: length)
            do {
                for try await chunk in body {
                    guard data.count + chunk.count <= length else { throw Self.lengthMismatch(length, "more") }
                    data.append(contentsOf: chunk)
                }
            } catch {
                throw CurlewError(mapping: error)
            }
            guard data.count == length else { throw .transport(Self.lengthMismatch(length, "fewer")) }
            return .data(data)
        }
        return .stream(length: length, replayable: replayable) { writer in
            for try await chunk in body { try await writer.write(chunk) }
        }
    }

    private static func lengthMismatch(_ length: Int, _ which: String) -> TransportError {
        TransportError(.bodyLengthMismatch, message: "the request body announced \(length) bytes and had \(which)")
    }
}

extension HTTPBody {
    /// The body's length, when it is known.
    var knownLength: Int? {
        if case .known(let count) = length { return Int(exactly: count) }
        return nil
    }

    /// A response body handed out of Curlew's chain as the runtime reads it: once, its length the one
    /// the server announced.
    static func streaming(_ body: EscapingResponseBody) -> HTTPBody {
        HTTPBody(body, length: body.expectedLength.map { .known(Int64($0)) } ?? .unknown, iterationBehavior: .single)
    }
}
