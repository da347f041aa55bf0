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
    /// The body is valid only inside `handler`. Returning (or throwing) before its last byte, or
    /// cancelling the calling task, aborts the transfer and closes its connection at once; a stream body's
    /// producer is cancelled and awaited before this returns.
    ///
    /// - Throws: ``TransportError`` for invalid input and transport failures (before the head, or from
    ///   the body when `handler` lets them through); what `handler` throws; what a stream body's producer
    ///   threw.
    public func perform<Return>(
        _ request: TransportRequest, isolation: isolated (any Actor)? = #isolation,
        handler: (ResponseHead, ResponseBody) async throws -> Return
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
        case follow(TransportRequest, ResponseHead)
    }

    /// Follows redirects hop by hop and runs `handler` with the final response. `sessionTotalTimeout`
    /// false leaves the session's total timeout out (downloads), keeping the request's own.
    func performFollowingRedirects<Return>(
        _ request: TransportRequest, isolation: isolated (any Actor)?, sessionTotalTimeout: Bool = true,
        handler: (ResponseHead, ResponseBody) async throws -> Return
    ) async throws -> Return {
        let started = MonotonicClock.now()
        let request = try request.applyingCompression()
        // Event streams have none: they are meant to last, and the idle timeout watches them.
        let sessionTotal = sessionTotalTimeout && !request.options.eventStream ? configuration.totalTimeout : nil
        let total = request.timeout.map { UInt64(max(1, $0.nanoseconds)) } ?? sessionTotal.map {
            UInt64(max(1, $0.nanoseconds))
        }
        let deadline = total.map { started &+ $0 }
        let policy = request.redirectPolicy ?? configuration.redirectPolicy
        let detectsLoops = !(configuration.cookies.isEnabled && request.options.handlesCookies != false)
        var current = request
        var prepared = try PreparedRequest(request, urls: urls)
        var chain: [RedirectStep] = []
        var visited: Set<String> = ["\(request.method.rawValue) \(request.url)"]
        var queued = Duration.zero
        var hopStarted = started
        while true {
            let origin = prepared.url.poolKey
            let isRedirectHop = !chain.isEmpty
            let hop: Hop<Return> = try await streamedHop(
                prepared, deadline: deadline, isRedirectHop: isRedirectHop, submitted: hopStarted, isolation: isolation
            ) { head, body in
                queued += head.timings.queued
                if (300..<400).contains(head.status.code), head.hasLocation {
                    let target = head.redirectURL.flatMap { url in parse(url).map { (url: url, key: $0.poolKey) } }
                    let decision = RedirectRules.decide(
                        request: current, origin: origin, status: head.status.code, hasLocation: true, target: target,
                        policy: policy, hopsSoFar: chain.count, visited: visited, detectsLoops: detectsLoops)
                    switch decision {
                    case .returnResponse:
                        break
                    case .fail(let code, let message):
                        throw refusal(code, message, request: current, head: head)
                    case .follow(let next, let leavesOrigin):
                        var follows = true
                        if case .custom(let decide) = policy.mode {
                            let step = RedirectHop(
                                from: current.url, status: head.status, to: next.url, nextRequest: next,
                                hopsSoFar: chain.count, leavesOrigin: leavesOrigin)
                            switch await decide(step) {
                            case .follow: break
                            case .stop: follows = false
                            case .refuse:
                                throw refusal(.redirectRefused, "the redirect policy refused the redirect", request: current, head: head)
                            }
                        }
                        if follows {
                            await Self.skip(body)
                            return .follow(next, head)
                        }
                    }
                }
                var final = head
                if !chain.isEmpty {
                    final.redirects = chain
                    final.timings.queued = queued
                    final.timings.redirect = .nanoseconds(Int64(clamping: hopStarted &- started))
                }
                return .done(try await handler(final, body))
            }
            switch hop {
            case .done(let result):
                return result
            case .follow(let next, let head):
                chain.append(RedirectStep(url: current.url, status: head.status))
                visited.insert("\(next.method.rawValue) \(next.url)")
                prepared = try PreparedRequest(next, urls: urls)
                current = next
                hopStarted = MonotonicClock.now()
            }
        }
    }

    /// One hop: submits the transfer, waits for its head, runs `body` with the head and the body reader.
    private func streamedHop<Result>(
        _ prepared: PreparedRequest, deadline: UInt64?, isRedirectHop: Bool, submitted: UInt64,
        isolation: isolated (any Actor)?,
        _ body: (ResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result {
        let streams = try await streams(for: prepared.request, streamedResponse: true)
        guard let streams, let response = streams.response else {
            throw prepared.error(.curl, "a streamed transfer was set up without its response stream")
        }
        let loop = self.loop
        let automaticDecompression = configuration.automaticDecompression
        let outputChunk = prepared.request.options.receiveBufferSize ?? configuration.receiveBufferSize
        return try await withExchange(
            prepared, streams: streams, deadline: deadline, isRedirectHop: isRedirectHop, submitted: submitted,
            isolation: isolation
        ) { transfer, control in
            let head = try await Self.submitStreamed(transfer, control: control, response: response, loop: loop)
            let source = Self.liveBody(
                of: head, response: response, control: control, request: prepared.request,
                automaticDecompression: automaticDecompression, outputChunk: outputChunk)
            defer { source.endScope() }
            return try await body(head, ResponseBody(source))
        }
    }

    /// Submits a streamed transfer and waits for its head; cancelling the calling task aborts it.
    @inline(never)
    static func submitStreamed(
        _ transfer: Transfer, control: TransferControl, response: ResponseStream, loop: EventLoop
    ) async throws(TransportError) -> ResponseHead {
        submit(transfer, loop: loop)
        while true {
            if let head = try response.pollHead() { return head }
            await withTaskCancellationHandler {
                await response.waitForHead()
            } onCancel: {
                control.abort()
            }
        }
    }

    /// Hands a streamed transfer to the loop (it fails at once when the session was shut down).
    @inline(never)
    static func submit(_ transfer: Transfer, loop: EventLoop) {
        if transfer.attachStreamed(), !loop.enqueue(.submit(transfer)) {
            transfer.finish(.failure(transfer.request.error(.sessionShutDown, "the session was shut down")))
        }
    }

    /// The body of a streamed transfer whose head arrived, decoded as ``decoding(of:for:automaticDecompression:)`` says.
    static func liveBody(
        of head: ResponseHead, response: ResponseStream, control: TransferControl, request: TransportRequest,
        automaticDecompression: Bool, outputChunk: Int
    ) -> BodySource {
        let decoding = decoding(of: head, for: request, automaticDecompression: automaticDecompression)
        return BodySource(
            .live(
                BodySource.LiveBody(
                    stream: response, control: control, coding: decoding.coding, unsupportedCoding: decoding.unsupported,
                    outputChunk: outputChunk)),
            maxBytes: request.options.maxResponseBodySize,
            expectedLength: decoding.coding == nil && decoding.unsupported == nil ? head.contentLength : nil)
    }

    /// How a streamed body is decoded: gzip and deflate by the reader; another coding fails the read,
    /// unless the request asked for it itself (its own `Accept-Encoding`), when it is handed out as sent.
    static func decoding(
        of head: ResponseHead, for request: TransportRequest, automaticDecompression: Bool
    ) -> (coding: ContentDecoder.Coding?, unsupported: String?) {
        guard automaticDecompression, let encoding = head.headerFields[.contentEncoding] else { return (nil, nil) }
        switch ContentDecoder.coding(for: encoding) {
        case .success(let coding):
            return (coding, nil)
        case .failure(let unsupported):
            let asked = request.headerFields[values: .acceptEncoding].joined(separator: ",").lowercased()
            return asked.contains(unsupported.name) ? (nil, nil) : (nil, unsupported.name)
        }
    }

    /// Reads and drops a redirect's body (up to 64 KiB; a longer one is aborted with its transfer).
    private static func skip(_ body: ResponseBody) async {
        var skipped = 0
        var iterator = body.makeAsyncIterator()
        while skipped < 64 * 1024, let chunk = try? await iterator.next() { skipped += chunk.count }
    }

    private func refusal(
        _ code: TransportError.Code, _ message: String, request: TransportRequest, head: ResponseHead
    ) -> TransportError {
        var error = TransportError(
            code, message: "\(message) (HTTP \(head.status.code))", url: request.url, method: request.method.rawValue)
        error.location = head.redirectURL ?? head.headerFields[.location]
        return error
    }
}
