// Curlew — an event stream's attempt read straight from the transfer by the task that reads the events:
// no task of its own, no hand-over per chunk, and one small wait for the head and every chunk.

import HTTPTypes

/// One connection attempt of an event stream whose transfer is read directly by the reading task. The
/// transfer is submitted when the attempt is made and runs until ``close()`` (or deinit). Not
/// `Sendable`: the reading task alone uses it.
///
/// The head and the chunks are taken by synchronous looks (``pollHead()``, ``poll()``) between bare
/// waits (``wait()``). A stream spends its life suspended in that wait, and a task's allocator keeps
/// the deepest stack the task ever had until it ends: connecting through the same shallow wait keeps an
/// idle stream's task small.
///
/// Redirects are followed here, hop by hop, as the scoped exchange follows them (``follow(_:)``): the
/// request is sent once per hop.
package final class EventStreamExchange {
    private let session: CurlSession
    private let walk: RedirectWalk
    private var exchange: Exchange
    /// The body, once the head has been taken.
    private var source: BodySource?
    private var iterator: ResponseBodyStream.Iterator?
    private var closed = false

    fileprivate init(session: CurlSession, walk: RedirectWalk, hop: Exchange) {
        self.session = session
        self.walk = walk
        exchange = hop
    }

    deinit { close() }

    /// The response head once it has arrived (handed out once; nil before); throws what failed the
    /// attempt before it. A redirect is handed out too: see ``follow(_:)``.
    @inline(never)
    package func pollHead() throws(TransportError) -> ResponseHead? {
        guard source == nil, let head = try exchange.pollHead(taking: true) else { return nil }
        let source = CurlSession.liveBody(
            of: head, exchange: exchange, request: exchange.request.request,
            automaticDecompression: session.configuration.automaticDecompression, outputChunk: outputChunk)
        self.source = source
        iterator = ResponseBodyStream(source).makeAsyncIterator()
        return head
    }

    /// The request of the hop running now (the last one sent).
    package var request: TransportRequest { exchange.request.request }

    /// The head the reader is handed: with the redirects that led to it.
    package func final(_ head: ResponseHead) -> ResponseHead { walk.final(head) }

    /// Follows `head` when it is a redirect the rules and the redirect policy follow: its body is
    /// skipped as the scoped exchange skips it, its transfer ended, and the next hop's request sent; returns false when
    /// `head` is the answer. Throws when the rules or the policy refuse the redirect.
    @inline(never)
    package nonisolated(nonsending) func follow(_ head: ResponseHead) async throws(TransportError) -> Bool {
        guard try walk.redirects(after: head, session: session), try await walk.policyFollows(head) else { return false }
        if var iterator {
            await CurlSession.skip(&iterator)
            self.iterator = iterator
        }
        endHop()
        try walk.advance(session: session)
        exchange = try session.submitEventStreamHop(walk)
        source = nil
        iterator = nil
        return true
    }

    /// The next chunk of the body, its end, or `.pending` while nothing new has arrived (then
    /// ``wait()``). Only after the head was taken.
    @inline(never)
    func poll() throws(TransportError) -> BodySource.Poll {
        guard var iterator else { return .pending }
        defer { self.iterator = iterator }
        return try iterator.poll()
    }

    /// Returns once the head (before it was taken) or bytes (after) have arrived, or the attempt
    /// ended. Cancelling the waiting task aborts the transfer.
    @inline(never)
    nonisolated(nonsending) func wait() async {
        if let source {
            await source.waitForBytes()
            return
        }
        let exchange = exchange
        await withTaskCancellationHandler {
            await exchange.waitForHead()
        } onCancel: {
            exchange.abort()
        }
    }

    /// The graceful shutdown of the session the attempt runs on.
    var shutdownNotice: ShutdownNotice { exchange.loop.shutdownNotice }

    /// Aborts the current hop's transfer from any task (the reader then sees it end).
    package var abort: @Sendable () -> Void {
        let exchange = exchange
        return { exchange.abort() }
    }

    /// Ends the attempt: a transfer still running is aborted.
    package func close() {
        guard !closed else { return }
        closed = true
        endHop()
    }

    private func endHop() {
        source?.endScope()
        exchange.release()
    }

    private var outputChunk: Int {
        exchange.request.request.options.receiveBufferSize ?? session.configuration.receiveBufferSize
    }
}

extension CurlSession {
    /// Submits `request` as an event stream's attempt, read by the calling task. Nil when the attempt
    /// needs the scoped exchange instead: a request with a streamed body (its producer runs in a task
    /// of its own) or with trailers computed when it is sent. Redirects are followed by the exchange.
    package func startEventStream(_ request: TransportRequest) throws(TransportError) -> sending EventStreamExchange? {
        if request.body?.isStream == true || request.body?.trailerSource != nil { return nil }
        // Only the request's own total timeout, until the head: event streams have no session total.
        let walk = try RedirectWalk(request, session: self, sessionTotalTimeout: true)
        return EventStreamExchange(session: self, walk: walk, hop: try submitEventStreamHop(walk))
    }

    /// Submits the walk's current hop as a streamed transfer.
    fileprivate func submitEventStreamHop(_ walk: RedirectWalk) throws(TransportError) -> Exchange {
        let exchange = makeExchange(
            walk.prepared, streamedResponse: true, trailers: nil, deadline: walk.deadline, isRedirectHop: !walk.chain.isEmpty,
            submitted: walk.hopStarted)
        exchange.submitStreamed()
        return exchange
    }
}
