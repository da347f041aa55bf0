// Curlew — the scoped streaming call: the response head and its body, read as it arrives, handed to a
// closure; redirects followed hop by hop as for buffered requests.

import HTTPTypes

extension CurlSession {
    /// Sends the request and hands the response head and its body, read as it arrives, to `handler`;
    /// returns what `handler` returns.
    ///
    /// Redirects are followed as for ``execute(_:)`` (a redirect's own body is skipped); `handler` gets the
    /// final response. The total timeout runs until the final head arrives; after that only the idle
    /// timeout applies, and the time you take to read (or a stream body's producer takes to write) is
    /// never idleness. No body limit applies unless the request sets one
    /// (``TransferOptions/maxResponseBodySize``).
    ///
    /// The body is valid only inside `handler`, unless `handler` detaches it (``ResponseBodyStream/detach()``:
    /// this then returns while the transfer runs on). Returning (or throwing) before its last byte, or
    /// cancelling the calling task, aborts the transfer and closes its connection at once; a stream body's
    /// producer is cancelled and awaited before this returns. Returning after the last byte while a stream
    /// body is still being produced (a full-duplex exchange) lets the request body end: this returns once
    /// it has, and the connection is reused. That wait is bounded by the total timeout again, counted from
    /// the start (a producer that never ends fails with ``TransportError/Code-swift.struct/timedOut``);
    /// cancelling the calling task aborts both.
    ///
    /// - Throws: ``TransportError`` for invalid input and transport failures (before the head, or from
    ///   the body when `handler` lets them through); what `handler` throws; what a stream body's producer
    ///   threw.
    public func perform<Return>(
        _ request: TransportRequest, isolation: isolated (any Actor)? = #isolation,
        handler: (ResponseHead, ResponseBodyStream) async throws -> Return
    ) async throws -> Return {
        do {
            return try await performFollowingRedirects(request, isolation: isolation, handler: handler)
        } catch let error as TransportError where error.code == .requestBodyFailed && error.underlying != nil {
            // The producer's own error, as it threw it.
            throw error.underlying ?? error
        }
    }

    private enum Hop<Return> {
        case done(Return)
        /// Follow the walk's `next` request.
        case follow
    }

    /// Follows redirects hop by hop and runs `handler` with the final response. `sessionTotalTimeout`
    /// false leaves the session's total timeout out (downloads), keeping the request's own.
    func performFollowingRedirects<Return>(
        _ request: TransportRequest, isolation: isolated (any Actor)?, sessionTotalTimeout: Bool = true,
        handler: (ResponseHead, ResponseBodyStream) async throws -> Return
    ) async throws -> Return {
        // The walk's state lives in one object: these frames stay allocated while the body is read,
        // which for a stream is its whole life.
        let walk = try RedirectWalk(request, session: self, sessionTotalTimeout: sessionTotalTimeout)
        while true {
            let hop: Hop<Return> = try await streamedHop(
                walk.prepared, deadline: walk.deadline, isRedirectHop: !walk.chain.isEmpty, submitted: walk.hopStarted,
                isolation: isolation
            ) { head, body in
                if try walk.redirects(after: head, session: self), try await walk.policyFollows(head) {
                    await Self.skip(body)
                    return (.follow, false)
                }
                return (.done(try await handler(walk.final(head), body)), true)
            }
            switch hop {
            case .done(let result): return result
            case .follow: try walk.advance(session: self)
            }
        }
    }

    /// One hop: submits the transfer, waits for its head, runs `body` with the head and the body reader.
    /// `body` says whether the transfer may end on its own once it returned (the handler's answer: its
    /// request body is let end after the whole response arrived) or is aborted (a redirect skipped).
    private func streamedHop<Result>(
        _ prepared: PreparedRequest, deadline: UInt64?, isRedirectHop: Bool, submitted: UInt64,
        isolation: isolated (any Actor)?,
        _ body: (ResponseHead, ResponseBodyStream) async throws -> (Result, letEnd: Bool)
    ) async throws -> Result {
        let exchange = try await makeExchange(
            prepared, streamedResponse: true, deadline: deadline, isRedirectHop: isRedirectHop, submitted: submitted)
        let automaticDecompression = configuration.automaticDecompression
        let outputChunk = prepared.request.options.receiveBufferSize ?? configuration.receiveBufferSize
        return try await withExchange(exchange, isolation: isolation) { exchange in
            let head = try await exchange.submitAndWaitForHead()
            let source = Self.liveBody(
                of: head, exchange: exchange, request: exchange.request.request,
                automaticDecompression: automaticDecompression, outputChunk: outputChunk)
            let (result, letEnd): (Result, Bool)
            do {
                (result, letEnd) = try await body(head, ResponseBodyStream(source))
            } catch {
                if source.endScope() { _ = exchange.scopeEnded(returned: false) }
                throw error
            }
            // A detached body's owner ends the transfer, not this scope.
            guard source.endScope() else { return result }
            if case .awaitEnd = exchange.scopeEnded(returned: letEnd) {
                try Self.settle(await exchange.awaitEnd())
            }
            return result
        }
    }

    /// How a transfer that ran on after its handler returned ended: its total timeout, a cancellation
    /// and its producer's failure are thrown; a failure of the rest of the exchange after the whole
    /// response arrived (the server closed the connection without reading the rest) is not the answer's.
    private static func settle(_ outcome: TransferOutcome) throws(TransportError) {
        guard case .failure(let error) = outcome else { return }
        switch error.code {
        case .timedOut, .cancelled, .requestBodyFailed, .bodyLengthMismatch, .invalidBody: throw error
        default: return
        }
    }

    /// The body of a streamed transfer whose head arrived, decoded as ``decoding(of:for:automaticDecompression:)`` says.
    static func liveBody(
        of head: ResponseHead, exchange: Exchange, request: TransportRequest, automaticDecompression: Bool, outputChunk: Int
    ) -> BodySource {
        let decoding = decoding(of: head, for: request, automaticDecompression: automaticDecompression)
        return BodySource(
            .live(
                BodySource.LiveBody(
                    exchange: exchange, coding: decoding.coding, unsupportedCoding: decoding.unsupported,
                    outputChunk: outputChunk)),
            maxBytes: request.options.maxResponseBodySize,
            expectedLength: decoding.coding == nil && decoding.unsupported == nil ? head.contentLength : nil)
    }

    /// How a streamed body is decoded: gzip and deflate by the reader; another coding fails the read,
    /// unless the request asked for it itself (its own `Accept-Encoding`), when it is handed out as sent.
    static func decoding(
        of head: ResponseHead, for request: TransportRequest, automaticDecompression: Bool
    ) -> (coding: ContentDecoder.Coding?, unsupported: String?) {
        // Every Content-Encoding field counts: a stack split over several lines is still a stack.
        let fields = head.headerFields[values: .contentEncoding]
        guard automaticDecompression, !fields.isEmpty else { return (nil, nil) }
        let encoding = fields.joined(separator: ", ")
        switch ContentDecoder.coding(for: encoding) {
        case .success(let coding):
            return (coding, nil)
        case .failure(let unsupported):
            let asked = request.headerFields[values: .acceptEncoding].joined(separator: ",").lowercased()
            return asked.contains(unsupported.name) ? (nil, nil) : (nil, unsupported.name)
        }
    }

    /// Reads and drops a redirect's body (up to 64 KiB, so its connection can be reused; a longer one is
    /// aborted with its transfer).
    private nonisolated(nonsending) static func skip(_ body: ResponseBodyStream) async {
        var iterator = body.makeAsyncIterator()
        await skip(&iterator)
    }

    /// ``skip(_:)`` for a body whose iterator is already made (an event stream's direct attempt).
    nonisolated(nonsending) static func skip(_ iterator: inout ResponseBodyStream.Iterator) async {
        var skipped = 0
        while skipped < 64 * 1024, let chunk = try? await iterator.next(isolation: #isolation) { skipped += chunk.count }
    }
}
