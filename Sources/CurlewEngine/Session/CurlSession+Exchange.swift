// Curlew — making a transfer's exchange, and running it with a stream body's producer beside it: both
// ended together.

import HTTPTypes

extension CurlSession {
    /// The exchange for one hop of `prepared`; the trailers of a body known up front are computed now.
    func makeExchange(
        _ prepared: PreparedRequest, streamedResponse: Bool, deadline: UInt64?, isRedirectHop: Bool, submitted: UInt64
    ) async throws(TransportError) -> Exchange {
        var trailers: HTTPFields?
        if prepared.request.body?.isStream != true, let source = prepared.request.body?.trailerSource {
            trailers = try await Self.trailers(from: source, for: prepared.request)
        }
        return makeExchange(
            prepared, streamedResponse: streamedResponse, trailers: trailers, deadline: deadline, isRedirectHop: isRedirectHop,
            submitted: submitted)
    }

    /// The exchange for one hop of `prepared`, given the trailers of a body known up front: a response
    /// collected or streamed, and the request side its body needs.
    func makeExchange(
        _ prepared: PreparedRequest, streamedResponse: Bool, trailers: HTTPFields?, deadline: UInt64?, isRedirectHop: Bool,
        submitted: UInt64
    ) -> Exchange {
        var prepared = carried(prepared, streamedResponse: streamedResponse)
        let record = observesHops(of: prepared.request) ? startHop(&prepared, submitted: submitted) : nil
        let request = prepared.request
        let body: ExchangeStateMachine.RequestSide
        switch request.body?.storage {
        case nil: body = .fixed(.none)
        case .bytes?: body = .fixed(.memory)
        case .file?, .segments?: body = .fixed(.file)
        case .stream(let producer)?:
            body = .stream(high: configuration.requestBodyBufferSize, length: producer.length, replayable: producer.replayable)
        }
        return Exchange(
            request: prepared, deadline: deadline, isRedirectHop: isRedirectHop, submitted: submitted, loop: loop,
            response: streamedResponse ? responseSide(for: request) : .collected, body: body, knownTrailers: trailers,
            sendsTrailers: request.body?.hasTrailers ?? false, record: record)
    }

    /// A streamed response's side: its mark's floor and cap, and the largest chunk handed to its reader.
    /// A request with its own receive buffer (an event stream) holds less, and its mark never grows.
    private func responseSide(for request: TransportRequest) -> ExchangeStateMachine.ResponseSide {
        let receiveBuffer = request.options.receiveBufferSize
        let floor = receiveBuffer.map { min(configuration.streamBufferSize, 4 * $0) } ?? configuration.streamBufferSize
        let grows = receiveBuffer == nil && !request.options.eventStream
        return .streamed(
            floor: floor, cap: grows ? max(floor, configuration.maxStreamBufferSize) : floor,
            chunkLimit: min(max(receiveBuffer ?? configuration.receiveBufferSize, 1024), 10 * 1024 * 1024))
    }

    /// Runs `body` with `exchange` (which `body` submits) and, for a stream body, its producer running in a
    /// task of its own. When `body` returns or throws, a transfer still running is aborted (its connection
    /// closed) and the producer is stopped and awaited; `body` decides first whether to let the transfer
    /// end (``Exchange/awaitEnd()``). A transfer whose body was detached runs on, and so does its producer,
    /// until it has written the whole request body or the transfer ends: a full-duplex exchange whose caller
    /// produces the request body after the call returned (an OpenAPI transport's) does not wait on itself.
    func withExchange<Result>(
        _ exchange: Exchange, isolation: isolated (any Actor)?, _ body: (Exchange) async throws -> Result
    ) async throws -> Result {
        guard case .stream(let producer) = exchange.request.request.body?.storage else {
            defer { exchange.closeScope() }
            return try await body(exchange)
        }
        let task = Self.startProducer(producer, into: exchange)
        exchange.adoptProducer(task)
        let result: Result
        do {
            result = try await withTaskCancellationHandler {
                try await body(exchange)
            } onCancel: {
                task.cancel()
            }
        } catch {
            await Self.closeScope(of: exchange, producer: task)
            throw error
        }
        await Self.closeScope(of: exchange, producer: task)
        return result
    }

    /// Starts a stream body's producer in a task of its own, which inherits the caller's priority and
    /// task-local values (a trace context) but may outlive the call, for a detached body.
    private static func startProducer(_ producer: BodyProducer, into exchange: Exchange) -> Task<Void, Never> {
        let trailers = exchange.request.request.body?.trailerSource
        let request = exchange.request.request
        return Task { await produce(producer, into: exchange, trailers: trailers, request: request) }
    }

    /// The scoped call is over: unless its body was detached, a transfer still running is aborted and the
    /// producer is stopped and awaited.
    private static func closeScope(of exchange: Exchange, producer task: Task<Void, Never>) async {
        guard !exchange.closeScope() else { return }
        exchange.closeRequest()
        task.cancel()
        await task.value
    }

    /// `prepared` as this libcurl can carry it. Where a fallback in ``CurlQuirks`` needs it, a transfer to an
    /// https host goes over HTTP/1.1: a streamed response, which may pause, where a paused HTTP/2 stream
    /// stalls the others on its connection; a request body read through libcurl's read callback, where
    /// HTTP/2 uploads stall or their end drops another stream's bytes. Plain http speaks HTTP/1.1 unless
    /// prior knowledge is asked for, which leaves no other protocol (and, where
    /// ``CurlQuirks/priorKnowledgeReusesConnections`` is false, gives each request a connection of its own).
    @inline(__always)
    func carried(_ prepared: consuming PreparedRequest, streamedResponse: Bool) -> PreparedRequest {
        guard configuration.quirks.someTransfersAvoidHTTP2 else { return prepared }
        return avoidingHTTP2IfNeeded(prepared, streamedResponse: streamedResponse)
    }

    private func avoidingHTTP2IfNeeded(_ prepared: PreparedRequest, streamedResponse: Bool) -> PreparedRequest {
        let quirks = configuration.quirks
        guard prepared.poolKey.isHTTPS, !prepared.poolKey.http1Only, configuration.httpVersion != .http1Only else {
            return prepared
        }
        let stalls = (streamedResponse && quirks.streamedResponsesAvoidHTTP2)
            || (quirks.callbackUploadsAvoidHTTP2 && prepared.request.body?.isReadByCallback == true)
        return stalls ? prepared.speakingHTTP1Only() : prepared
    }

    /// One hop with a buffered response and a streamed request body or trailers.
    func runWithBody(
        _ prepared: PreparedRequest, deadline: UInt64?, isRedirectHop: Bool, submitted: UInt64
    ) async throws(TransportError) -> TransportResponse {
        let exchange = try await makeExchange(
            prepared, streamedResponse: false, deadline: deadline, isRedirectHop: isRedirectHop, submitted: submitted)
        let outcome: TransferOutcome
        do {
            outcome = try await withExchange(exchange, isolation: nil) { exchange in await exchange.submitAndWait() }
        } catch {
            throw error as? TransportError ?? prepared.error(.cancelled, "the transfer ended: \(error)")
        }
        return try outcome.get()
    }

    /// Runs a stream body's producer: again from the first byte each time curl rewinds the body, until
    /// the exchange ends. Its failure fails the transfer; failures after the exchange ended (or caused by
    /// it) are not the producer's.
    static func produce(
        _ producer: BodyProducer, into exchange: Exchange, trailers: TrailerSource?, request: TransportRequest
    ) async {
        var generation = exchange.generation
        while true {
            let writer = RequestBodyWriter(exchange: exchange, generation: generation)
            do {
                try await producer.produce(writer)
                var fields: HTTPFields?
                if let trailers { fields = try await Self.trailers(from: trailers, for: request) }
                exchange.finishBody(generation: generation, trailers: fields)
            } catch {
                if !exchange.isRequestClosed, exchange.generation == generation, !Task.isCancelled {
                    exchange.failBody(generation: generation, failure(error, request))
                }
            }
            guard let next = await exchange.waitForReplay(after: generation) else { return }
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
