// Curlew — one transfer with streamed parts: the producer task of a stream body beside the transfer,
// both ended together.

import HTTPTypes

extension CurlSession {
    /// The streamed parts a transfer of `request` needs; nil when both bodies are in memory (the common
    /// case, which costs nothing here). Trailers of bodies known up front are computed now.
    func streams(for request: TransportRequest, streamedResponse: Bool) async throws(TransportError) -> TransferStreams? {
        var trailers: HTTPFields?
        if request.body?.isStream != true, let source = request.body?.trailerSource {
            trailers = try await Self.trailers(from: source, for: request)
        }
        return streams(for: request, streamedResponse: streamedResponse, trailers: trailers)
    }

    /// The streamed parts a transfer of `request` needs, given the trailers of a body known up front.
    func streams(for request: TransportRequest, streamedResponse: Bool, trailers: HTTPFields?) -> TransferStreams? {
        let body = request.body
        let sendsTrailers = body?.hasTrailers ?? false
        var producer: BodyProducer?
        if case .stream(let stream) = body?.storage { producer = stream }
        guard streamedResponse || producer != nil || sendsTrailers else { return nil }
        // A request with its own receive buffer (an event stream) also holds less unread.
        let receiveBuffer = request.options.receiveBufferSize
        return TransferStreams(
            response: streamedResponse ? ResponseStream(
                    highWater: receiveBuffer.map { min(configuration.streamBufferSize, 4 * $0) } ?? configuration.streamBufferSize,
                    chunkLimit: min(max(receiveBuffer ?? configuration.receiveBufferSize, 1024), 10 * 1024 * 1024)) : nil,
            request: producer.map { RequestStream(length: $0.length, highWater: configuration.requestBodyBufferSize) },
            requestReplayable: producer?.replayable ?? true, trailers: trailers, sendsTrailers: sendsTrailers)
    }

    /// Runs `body` with a transfer of `prepared` (which `body` submits) and, for a stream body, its
    /// producer running in a child task. When `body` returns or throws, a transfer still running is
    /// aborted (its connection closed) and the producer is stopped and awaited.
    func withExchange<Result>(
        _ prepared: PreparedRequest, streams: TransferStreams?, deadline: UInt64?, isRedirectHop: Bool,
        submitted: UInt64, isolation: isolated (any Actor)?,
        _ body: (Transfer, TransferControl) async throws -> Result
    ) async throws -> Result {
        let prepared = carried(prepared, streamedResponse: streams?.response != nil)
        let transfer = Transfer(
            request: prepared, deadline: deadline, isRedirectHop: isRedirectHop, submitted: submitted, streams: streams)
        let control = TransferControl(transfer: transfer, loop: loop)
        var producer: BodyProducer?
        if case .stream(let stream) = prepared.request.body?.storage { producer = stream }
        guard let producer, let requestStream = streams?.request else {
            do {
                let result = try await body(transfer, control)
                control.abort()
                return result
            } catch {
                control.abort()
                throw error
            }
        }
        let trailers = prepared.request.body?.trailerSource
        let request = prepared.request
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self, isolation: isolation) { group in
            group.addTask {
                await Self.produce(producer, into: requestStream, trailers: trailers, request: request, control: control)
            }
            do {
                let result = try await body(transfer, control)
                control.abort()
                requestStream.close()
                group.cancelAll()
                return result
            } catch {
                control.abort()
                requestStream.close()
                group.cancelAll()
                throw error
            }
        }
    }

    /// `prepared` as this libcurl can carry it. Where a fallback in ``CurlQuirks`` needs it, a transfer to an
    /// https host goes over HTTP/1.1: a streamed response, which may pause, where a paused HTTP/2 stream
    /// stalls the others on its connection; a request body read through libcurl's read callback, where
    /// HTTP/2 uploads stall. Plain http speaks HTTP/1.1 unless prior knowledge is asked for, which leaves
    /// no other protocol (and before libcurl 8.0 gives each request a connection of its own).
    @inline(__always)
    func carried(_ prepared: PreparedRequest, streamedResponse: Bool) -> PreparedRequest {
        guard configuration.quirks.someTransfersAvoidHTTP2 else { return prepared }
        return avoidingHTTP2IfNeeded(prepared, streamedResponse: streamedResponse)
    }

    private func avoidingHTTP2IfNeeded(_ prepared: PreparedRequest, streamedResponse: Bool) -> PreparedRequest {
        let quirks = configuration.quirks
        guard prepared.poolKey.isHTTPS, !prepared.poolKey.http1Only, configuration.httpVersion != .http1Only else {
            return prepared
        }
        let stalls = (streamedResponse && quirks.streamedResponsesAvoidHTTP2)
            || (quirks.http2UploadsStall && prepared.request.body?.isReadByCallback == true)
        return stalls ? prepared.speakingHTTP1Only() : prepared
    }

    /// Submits a transfer whose response is collected in memory and waits for its outcome.
    // Inlined: every buffered request passes here, and a separate async frame costs a task allocation.
    @inline(__always)
    func submitAndWait(_ transfer: Transfer) async -> TransferOutcome {
        let loop = self.loop
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: Transfer.Continuation) in
                guard transfer.attach(continuation) else { return }
                if !loop.enqueue(.submit(transfer)) {
                    transfer.finish(.failure(transfer.request.error(.sessionShutDown, "the session was shut down")))
                }
            }
        } onCancel: {
            // Must not block: flag the transfer and, if the loop has it, queue an abort.
            if transfer.markCancelled() { loop.enqueue(.cancel(transfer)) }
        }
        return transfer.takeOutcome()
    }

    /// One hop with a buffered response and a streamed request body or trailers.
    func runWithBody(
        _ prepared: PreparedRequest, deadline: UInt64?, isRedirectHop: Bool, submitted: UInt64
    ) async throws(TransportError) -> TransportResponse {
        let streams = try await streams(for: prepared.request, streamedResponse: false)
        let outcome: TransferOutcome
        do {
            outcome = try await withExchange(
                prepared, streams: streams, deadline: deadline, isRedirectHop: isRedirectHop, submitted: submitted,
                isolation: nil
            ) { transfer, _ in
                await self.submitAndWait(transfer)
            }
        } catch {
            throw error as? TransportError ?? prepared.error(.cancelled, "the transfer ended: \(error)")
        }
        return try outcome.get()
    }

    /// Runs a stream body's producer: again from the first byte each time curl rewinds the body, until
    /// the exchange ends. Its failure fails the transfer; failures after the exchange ended (or caused by
    /// it) are not the producer's.
    static func produce(
        _ producer: BodyProducer, into stream: RequestStream, trailers: TrailerSource?, request: TransportRequest,
        control: TransferControl
    ) async {
        var generation = stream.generation
        while true {
            let writer = RequestBodyWriter(stream: stream, generation: generation, resumeLoop: { control.resume(.send) })
            do {
                try await producer.produce(writer)
                var fields: HTTPFields?
                if let trailers { fields = try await Self.trailers(from: trailers, for: request) }
                if stream.finish(generation: generation, trailers: fields) { control.resume(.send) }
            } catch {
                if !stream.isClosed, stream.generation == generation, !Task.isCancelled,
                    stream.fail(generation: generation, failure(error, request))
                {
                    control.resume(.send)
                }
            }
            guard let next = await stream.waitForReplay(after: generation) else { return }
            generation = next
        }
    }

    /// The error a producer's throw fails the request with: the engine's own errors about the body as they
    /// are, anything else as ``TransportError/Code/requestBodyFailed`` carrying it.
    static func failure(_ error: any Error, _ request: TransportRequest) -> TransportError {
        if let error = error as? TransportError, [.bodyLengthMismatch, .invalidBody, .invalidHeader, .requestBodyFailed].contains(error.code) {
            return error
        }
        var failure = TransportError(
            .requestBodyFailed, message: "the request body's producer failed: \(error)", url: request.url,
            method: request.method.rawValue)
        failure.underlying = error
        return failure
    }

    /// A body's trailer fields, checked.
    static func trailers(from source: TrailerSource, for request: TransportRequest) async throws(TransportError) -> HTTPFields {
        let fields: HTTPFields
        do {
            fields = try await source.make()
        } catch {
            var failure = TransportError(
                .requestBodyFailed, message: "the request body's trailers could not be made: \(error)", url: request.url,
                method: request.method.rawValue)
            failure.underlying = error
            throw failure
        }
        try PreparedRequest.check(trailers: fields, request)
        return fields
    }
}
