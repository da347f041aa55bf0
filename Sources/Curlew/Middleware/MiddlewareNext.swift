// Curlew — the rest of a middleware chain, and the transport at its end.

/// The rest of the chain after a middleware: the members after it, then the transport.
///
/// Valid for the call to ``TransportMiddleware/intercept(_:context:next:handler:)`` it was handed to; call it
/// as a function, any number of times (each call is one exchange).
public struct MiddlewareNext: Sendable {
    let members: [any TransportMiddleware]
    let index: Int
    let transport: any HTTPTransport

    /// Carries out the exchange for `request` through the rest of the chain and returns what `handler`
    /// returned.
    ///
    /// - Throws: ``CurlewError``: ``CurlewError/transport(_:)`` for transport failures, what `handler`
    ///   or a later middleware threw.
    // Inlined into each caller (a middleware, the provider): a forward needs no async frame of its own.
    @inline(__always)
    public nonisolated(nonsending) func callAsFunction<Return>(
        _ request: TransportRequest, _ context: MiddlewareContext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        guard index < members.count else {
            return try await Self.exchange(request, context: context, transport: transport, handler: handler)
        }
        let next = MiddlewareNext(members: members, index: index + 1, transport: transport)
        return try await members[index].intercept(request, context: context, next: next, handler: handler)
    }

    /// The end of every chain: the transport, or a stubbed target's sample response. A caller that
    /// collects the body gets the complete response the transport collected itself (no streaming
    /// machinery); others read it as it arrives.
    nonisolated(nonsending) static func exchange<Return>(
        _ request: TransportRequest, context: MiddlewareContext, transport: any HTTPTransport,
        handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        if context.stub != .never, let endpoint = context.endpoint {
            return try await StubResponder.answer(request, endpoint: endpoint, stub: context.stub, handler: handler)
        }
        // A middleware that sent the request again (a retry, a replay) counts the attempt in its context.
        // Only then is the request copied.
        if let call = request.call, call.attempt != context.attempt {
            var request = request
            request.call = CallContext(logger: call.logger, id: call.id, attempt: context.attempt, operation: call.operation)
            return try await send(request, context: context, transport: transport, handler: handler)
        }
        return try await send(request, context: context, transport: transport, handler: handler)
    }

    /// The transport's exchange for `request`, collected or streamed as the caller reads it.
    @inline(__always)
    nonisolated(nonsending) private static func send<Return>(
        _ request: TransportRequest, context: MiddlewareContext, transport: any HTTPTransport,
        handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        if context.collectsBody {
            return try await collected(request, transport: transport, handler: handler)
        }
        do {
            return try await transport.perform(request, isolation: #isolation) { head, body in
                try await handler(head, body)
            }
        } catch {
            // The transport's failures (and what its handler threw, already mapped) become the provider
            // layer's here, once for every path.
            throw CurlewError(mapping: error, url: request.url)
        }
    }

    /// The transport's complete response: an empty chain's whole exchange for a caller that collects the
    /// body, and the end of every other such chain.
    @inline(__always)
    nonisolated(nonsending) static func collect(
        _ request: TransportRequest, transport: any HTTPTransport
    ) async throws(CurlewError) -> TransportResponse {
        do {
            return try await transport.execute(request)
        } catch {
            throw CurlewError(error)
        }
    }

    /// The transport's complete response, handed to `handler` as a body read from memory. Apart from
    /// the streamed path: a stream holds that path's frames for its whole life, and they need not hold
    /// a response.
    @inline(never)
    nonisolated(nonsending) private static func collected<Return>(
        _ request: TransportRequest, transport: any HTTPTransport, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        let response = try await collect(request, transport: transport)
        let body = ResponseBodyStream(response: response)
        defer { body.endScope() }
        return try await handler(ResponseHead(response), body)
    }
}
