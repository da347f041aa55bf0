// Curlew — the chain's scoped call turned into a head and a body that outlives the call: for
// interfaces that return the body (an OpenAPI client transport), as an adapter, not a second chain.

import CurlewEngine
import HTTPTypes

extension MiddlewareChain {
    /// Sends `request` through the chain and returns as soon as the response head has arrived, with a
    /// body that can be read later and elsewhere.
    ///
    /// The body is the transport's, detached from the call (``/CurlewEngine/ResponseBodyStream/detach()``): no
    /// task runs beside it, and the transport's backpressure applies to whoever reads it. Dropping the
    /// body before its end, or cancelling a task that reads it, ends the exchange and closes its
    /// connection; so does cancelling the calling task before the head arrives. A stream request body
    /// goes on being produced after this returns, until its end or the exchange's.
    ///
    /// - Throws: ``CurlewError`` for what fails before the head (transport, middleware).
    public func send(
        _ request: TransportRequest, context: MiddlewareContext = MiddlewareContext()
    ) async throws(CurlewError) -> (ResponseHead, EscapingResponseBody) {
        try await perform(request, context: context) { head, body throws(CurlewError) in
            try EscapingResponseBody.handOut(head, body)
        }
    }
}

/// A response body that can be read after the call that returned it (see ``MiddlewareChain/send(_:context:)``).
///
/// Read it once. Dropping it before its end ends the exchange.
public struct EscapingResponseBody: AsyncSequence, Sendable {
    public typealias Element = ArraySlice<UInt8>
    public typealias Failure = CurlewError

    let body: DetachedResponseBody

    init(_ body: DetachedResponseBody) {
        self.body = body
    }

    /// The handler that hands a response out of the chain: its head, and its body detached from the call.
    package static func handOut(_ head: ResponseHead, _ body: ResponseBodyStream) throws(CurlewError) -> (ResponseHead, EscapingResponseBody) {
        do {
            return (head, EscapingResponseBody(try body.detach()))
        } catch {
            throw CurlewError(error)
        }
    }

    /// The trailer fields that followed the last chunk: nil until the body has been read to its end,
    /// and when the response had none.
    public var trailerFields: HTTPFields? { body.trailerFields }

    /// The body's length as the server announced it (`Content-Length`), when its bytes are handed out as
    /// sent; nil otherwise.
    public var expectedLength: Int? { body.expectedLength }

    public func makeAsyncIterator() -> Iterator { Iterator(chunks: body.makeAsyncIterator()) }

    /// Reads the chunks of an ``EscapingResponseBody``; holds the body, so the exchange lives as long as
    /// an iterator does.
    public struct Iterator: AsyncIteratorProtocol {
        var chunks: DetachedResponseBody.Iterator

        public mutating func next() async throws(CurlewError) -> ArraySlice<UInt8>? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CurlewError) -> ArraySlice<UInt8>? {
            do throws(TransportError) {
                return try await chunks.next(isolation: actor)
            } catch {
                throw CurlewError(error)
            }
        }
    }
}
