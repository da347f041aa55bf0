// Curlew — which HTTP versions a session speaks.

/// Which HTTP versions a session uses.
public enum HTTPVersionPolicy: Sendable, Hashable {
    /// HTTP/2 over TLS when the server offers it through ALPN, HTTP/1.1 otherwise; plain http is
    /// HTTP/1.1. The default.
    case automatic
    /// HTTP/1.1 only.
    case http1Only
    /// HTTP/2 without negotiation for plain http (prior knowledge: the server must speak it); https as
    /// ``automatic``.
    case http2PriorKnowledge
}
