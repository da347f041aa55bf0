// Curlew — the small protocol the provider layer talks to.

/// Something that carries out an HTTP exchange: the libcurl engine (``CurlSession``), or a test double.
public protocol HTTPTransport: Sendable {
    /// Sends the request and returns the complete response.
    ///
    /// - Throws: ``TransportError`` when no complete response was received, including
    ///   ``TransportError/Code/cancelled`` when the calling task is cancelled.
    func execute(_ request: TransportRequest) async throws(TransportError) -> TransportResponse

    /// The request as this transport will put it on the wire: `request` plus the header fields the
    /// transport adds itself (a ``CurlSession`` adds its `User-Agent` and `Accept-Encoding` unless the
    /// request sets them). Loggers show this, so what they print is what is sent.
    ///
    /// Framing fields that libcurl derives from the request (`Host`, `Content-Length`) are not listed.
    /// The default implementation returns `request` unchanged.
    func wireRequest(for request: TransportRequest) async -> TransportRequest
}

extension HTTPTransport {
    /// Returns `request` unchanged: a transport that adds no fields of its own.
    public func wireRequest(for request: TransportRequest) async -> TransportRequest { request }
}
