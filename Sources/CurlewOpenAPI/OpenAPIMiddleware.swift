// Curlew — a swift-openapi ClientMiddleware run as one of Curlew's middleware: in a CurlewTransport's
// chain beside Curlew's own, or in a provider's.

public import Curlew
public import CurlewEngine
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
public import OpenAPIRuntime

/// Runs an OpenAPI `ClientMiddleware` as one of Curlew's ``/Curlew/TransportMiddleware``: an authentication or
/// logging middleware written for generated clients then runs inside Curlew's chain, in the order you
/// give, beside ``/Curlew/RetryMiddleware`` (each retry passes through it again) or in a
/// ``/Curlew/Provider``'s chain.
///
/// ```swift
/// let transport = CurlewTransport(session, middleware: [RetryMiddleware(), OpenAPIMiddleware(BearerAuth(token))])
/// ```
///
/// The middleware sees what the OpenAPI runtime would give it: the request with its path and query (its
/// `baseURL` the request's scheme and authority), the body as an `HTTPBody` and the call's operation id
/// (``/CurlewEngine/CallContext/operation``, empty when the call named none). What it changes is sent; a
/// body it hands on unchanged is sent as the request's own (a file stays a file, read in place). A file or
/// a stream it reads is read into memory for it, and a stream that cannot be produced again is then sent
/// from those bytes. The response it returns is what the rest of the chain sees, its body read as it
/// arrives.
public struct OpenAPIMiddleware: TransportMiddleware {
    /// The OpenAPI middleware.
    public let middleware: any ClientMiddleware

    /// Runs `middleware` in Curlew's chain.
    public init(_ middleware: any ClientMiddleware) {
        self.middleware = middleware
    }

    public func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        guard let (baseURL, path) = OpenAPIURL.split(request.url) else {
            throw .transport(TransportError(.invalidURL, message: "the URL has no scheme and host", url: request.url))
        }
        let original = OriginalBody(request.body)
        let heads = ReceivedHeads()
        let (response, body): (HTTPResponse, HTTPBody?)
        do {
            (response, body) = try await middleware.intercept(
                HTTPRequest(method: request.method, scheme: nil, authority: nil, path: path, headerFields: request.headerFields),
                body: original.httpBody, baseURL: baseURL, operationID: request.call?.operation ?? ""
            ) { changed, changedBody, changedBaseURL in
                var outgoing = request
                outgoing.url = OpenAPIURL.join(changedBaseURL, changed.path)
                outgoing.method = changed.method
                outgoing.headerFields = changed.headerFields
                outgoing.body = try await original.requestBody(sending: changedBody)
                let (head, escaping) = try await next(outgoing, context) { head, body throws(CurlewError) in
                    try EscapingResponseBody.handOut(head, body)
                }
                let received = HTTPBody.streaming(escaping)
                heads.record(head, body: received)
                return (HTTPResponse(status: head.status, headerFields: head.headerFields), received)
            }
        } catch {
            throw CurlewError(mapping: error, url: request.url)
        }
        // The head the transport gave (its URL, version, timings), with what the middleware made of it.
        var head = heads.head(for: body) ?? ResponseHead(status: response.status)
        head.status = response.status
        head.headerFields = response.headerFields
        let responseBody = body.map { ResponseBodyStream(chunks: $0, expectedLength: $0.knownLength) } ?? ResponseBodyStream(data: Data())
        defer { responseBody.endScope() }
        return try await handler(head, responseBody)
    }
}

/// The heads of the responses the rest of the chain returned to the middleware, by the body handed out
/// with each (a middleware may call `next` more than once).
private final class ReceivedHeads: Sendable {
    private let heads = Locked<[(body: ObjectIdentifier, head: ResponseHead)]>([])

    func record(_ head: ResponseHead, body: HTTPBody) {
        heads.withLock { $0.append((ObjectIdentifier(body), head)) }
    }

    /// The head `body` came with; the last one received for a body the middleware made itself; nil when
    /// the middleware answered without calling `next`.
    func head(for body: HTTPBody?) -> ResponseHead? {
        heads.withLock { heads in
            if let body, let match = heads.last(where: { $0.body == ObjectIdentifier(body) }) { return match.head }
            return heads.last?.head
        }
    }
}

/// The request's body as the middleware sees it (an `HTTPBody` read only if it reads it), and the body to
/// send for the one it hands on.
private final class OriginalBody: Sendable {
    let body: TransportRequest.Body?
    let httpBody: HTTPBody?
    /// The bytes of a body the middleware read, which a stream read once cannot produce again.
    private let collected: CollectedBytes

    init(_ body: TransportRequest.Body?) {
        self.body = body
        let collected = CollectedBytes()
        self.collected = collected
        switch body {
        case nil:
            httpBody = nil
        case let body?:
            if let bytes = body.inMemoryBytes {
                httpBody = HTTPBody(bytes)
            } else {
                httpBody = HTTPBody(
                    CollectingSequence(body: body, collected: collected),
                    length: body.knownLength.map { .known(Int64($0)) } ?? .unknown,
                    iterationBehavior: body.isReplayable ? .multiple : .single)
            }
        }
    }

    /// What to send for `handed`: the request's own body when the middleware handed it on unchanged (its
    /// bytes when the middleware read a stream that cannot be produced again), else `handed` streamed.
    func requestBody(sending handed: HTTPBody?) async throws(CurlewError) -> TransportRequest.Body? {
        guard let handed, let httpBody, handed === httpBody else {
            return try await TransportRequest.Body.from(handed, inMemoryLimit: CurlewTransport.Configuration.defaultInMemoryRequestBodyLimit)
        }
        if let body, !body.isReplayable, let bytes = collected.bytes { return .data(bytes) }
        return body
    }
}

/// The bytes a ``CollectingSequence`` read.
private final class CollectedBytes: Sendable {
    private let stored = Locked<Data?>(nil)
    var bytes: Data? { stored.withLock { $0 } }
    func store(_ data: Data) { stored.withLock { $0 = data } }
}

/// A request body read into memory when first iterated: what an OpenAPI middleware that reads the body
/// (to sign it, say) gets for a file or a stream.
private struct CollectingSequence: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    let body: TransportRequest.Body
    let collected: CollectedBytes

    func makeAsyncIterator() -> Iterator { Iterator(body: body, collected: collected) }

    struct Iterator: AsyncIteratorProtocol {
        let body: TransportRequest.Body
        let collected: CollectedBytes
        var done = false

        mutating func next() async throws -> ArraySlice<UInt8>? {
            guard !done else { return nil }
            done = true
            let data = try await body.collect(upTo: Int.max)
            collected.store(data)
            return data.isEmpty ? nil : ArraySlice(data)
        }
    }
}
