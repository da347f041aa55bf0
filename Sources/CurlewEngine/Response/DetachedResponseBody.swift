// Curlew — a response body taken out of the closure it was handed to: its transfer runs on after the
// closure returns, and ends when the body is read to its end or dropped.

public import HTTPTypes

extension ResponseBodyStream {
    /// Takes the body out of the closure it was handed to: the closure may return (and the call that
    /// handed it out with it) while the transfer runs on, read through the returned body from any task.
    ///
    /// Dropping the detached body before its end aborts the transfer and closes its connection, as
    /// returning from the closure does for a body that was not detached; cancelling a task while it
    /// reads does too. Detach before reading: a body whose reading began, whose closure returned or
    /// that was detached already cannot be. A request body produced by a stream goes on being produced
    /// after the call returned, in a task of its own, until its end or the transfer's: its source may be
    /// fed only once the response is in hand (a full-duplex exchange).
    ///
    /// ```swift
    /// let (head, body) = try await session.perform(request) { head, body in (head, try body.detach()) }
    /// for try await chunk in body { consume(chunk) }
    /// ```
    ///
    /// - Throws: ``TransportError/Code/bodyUnavailable`` when the body cannot be detached.
    public func detach() throws(TransportError) -> DetachedResponseBody {
        try source.detach()
        return DetachedResponseBody(self)
    }
}

/// A response body that outlives the closure it was handed to (``ResponseBodyStream/detach()``): read it once,
/// from any task. Dropping it before its end aborts the transfer.
public final class DetachedResponseBody: AsyncSequence, Sendable {
    public typealias Element = ArraySlice<UInt8>
    public typealias Failure = TransportError

    let body: ResponseBodyStream

    init(_ body: ResponseBodyStream) {
        self.body = body
    }

    deinit {
        body.source.release()
    }

    /// The trailer fields that followed the last chunk: nil until the body has been read to its end, and
    /// when the response had none.
    public var trailerFields: HTTPFields? { body.trailerFields }

    /// The body's length as the server announced it, when the bytes are handed out as sent; nil otherwise.
    public var expectedLength: Int? { body.expectedLength }

    public func makeAsyncIterator() -> Iterator {
        Iterator(owner: self, chunks: body.makeAsyncIterator())
    }

    /// Returns once the transfer has delivered something new or ended (a synchronous reader's wait
    /// between ``Iterator/poll()`` calls). Cancelling the waiting task aborts the transfer.
    func waitForBytes() async {
        await body.source.waitForBytes()
    }

    /// The graceful shutdown of the session the transfer runs on; nil for bytes already in memory.
    var shutdownNotice: ShutdownNotice? {
        guard case .live(let live) = body.source.backing else { return nil }
        return live.exchange.loop.shutdownNotice
    }

    /// Aborts the transfer unless it has ended, from any task (a reader waiting then sees it end).
    func abortTransfer() {
        body.source.abandon()
    }

    /// Reads the chunks of a ``DetachedResponseBody``; holds the body, so the transfer lives as long as
    /// an iterator does.
    public struct Iterator: AsyncIteratorProtocol {
        let owner: DetachedResponseBody
        var chunks: ResponseBodyStream.Iterator

        public mutating func next() async throws(TransportError) -> ArraySlice<UInt8>? {
            try await chunks.next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(TransportError) -> ArraySlice<UInt8>? {
            try await chunks.next(isolation: actor)
        }

        /// The next chunk, the end, or `.pending` while nothing new has arrived (then
        /// ``DetachedResponseBody/waitForBytes()``): a reader that spends its life waiting keeps a small frame.
        mutating func poll() throws(TransportError) -> BodySource.Poll {
            try chunks.poll()
        }
    }
}
