// Curlew — the small protocol the provider layer talks to.

/// Something that carries out an HTTP exchange: the libcurl engine (``CurlSession``), or a test double.
public protocol HTTPTransport: Sendable {
    /// Sends the request and returns the complete response.
    ///
    /// - Throws: ``TransportError`` when no complete response was received, including
    ///   ``TransportError/Code/cancelled`` when the calling task is cancelled.
    func execute(_ request: TransportRequest) async throws(TransportError) -> TransportResponse
}
