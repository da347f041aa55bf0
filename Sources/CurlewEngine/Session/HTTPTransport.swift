// Curlew — the small protocol the provider layer talks to.

/// Something that carries out an HTTP exchange: the libcurl engine (``CurlSession``), or a test double.
public protocol HTTPTransport: Sendable {
    /// Sends the request and returns the complete response.
    ///
    /// - Throws: ``TransportError`` when no complete response was received, including
    ///   ``TransportError/Code/cancelled`` when the calling task is cancelled.
    func execute(_ request: TransportRequest) async throws(TransportError) -> TransportResponse

    /// Sends the request and hands the response head and its body, read as it arrives, to `handler`;
    /// returns what `handler` returns.
    ///
    /// The body is valid only inside `handler`, unless `handler` detaches it (``ResponseBodyStream/detach()``).
    /// Returning (or throwing) before its last byte aborts the transfer and closes its connection; so
    /// does cancelling the calling task.
    ///
    /// - Throws: ``TransportError`` for transport failures, what `handler` throws, or what a stream
    ///   body's producer threw.
    func perform<Return>(
        _ request: TransportRequest, isolation: isolated (any Actor)?,
        handler: (ResponseHead, ResponseBodyStream) async throws -> Return
    ) async throws -> Return

    /// The request as this transport will put it on the wire: `request` plus the header fields the
    /// transport adds itself (a ``CurlSession`` adds its `User-Agent` and `Accept-Encoding` unless the
    /// request sets them). Loggers show this, so what they print is what is sent.
    ///
    /// Framing fields that libcurl derives from the request (`Host`, `Content-Length`) are not listed.
    /// The default implementation returns `request` unchanged.
    func wireRequest(for request: TransportRequest) async -> TransportRequest

    /// The request as this transport puts it on the wire when its response is streamed (a streamed
    /// response may offer fewer codings: see ``ResponseBodyStream``). The default implementation returns
    /// ``wireRequest(for:)``.
    func wireRequest(forStreamed request: TransportRequest) async -> TransportRequest
}

extension HTTPTransport {
    /// Returns `request` unchanged: a transport that adds no fields of its own.
    public func wireRequest(for request: TransportRequest) async -> TransportRequest { request }

    /// Returns ``wireRequest(for:)``.
    public func wireRequest(forStreamed request: TransportRequest) async -> TransportRequest {
        await wireRequest(for: request)
    }

    /// Sends the request and hands the response head and its body, read as it arrives, to `handler`;
    /// returns what `handler` returns (see ``perform(_:isolation:handler:)``). `handler` runs in the
    /// caller's isolation.
    ///
    /// ```swift
    /// let lines = try await session.perform(request) { head, body in
    ///     var count = 0
    ///     for try await chunk in body { count += chunk.count { $0 == UInt8(ascii: "\n") } }
    ///     return count
    /// }
    /// ```
    ///
    /// - Throws: ``TransportError`` for transport failures, what `handler` throws, or what a stream
    ///   body's producer threw.
    public func perform<Return>(
        _ request: TransportRequest, isolation: isolated (any Actor)? = #isolation,
        _ handler: (ResponseHead, ResponseBodyStream) async throws -> Return
    ) async throws -> Return {
        try await perform(request, isolation: isolation, handler: handler)
    }

    /// Runs ``execute(_:)`` and hands `handler` the complete response's head and its body from memory: a
    /// transport that does not stream (a test double) still serves streaming callers.
    public func perform<Return>(
        _ request: TransportRequest, isolation: isolated (any Actor)?,
        handler: (ResponseHead, ResponseBodyStream) async throws -> Return
    ) async throws -> Return {
        let response = try await execute(request)
        let body = ResponseBodyStream(response: response)
        defer { body.source.endScope() }
        return try await handler(ResponseHead(response), body)
    }
}
