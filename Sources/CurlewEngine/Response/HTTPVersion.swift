// Curlew — the HTTP version a response arrived over.

extension ResponseHead {
    /// The protocol version a response was received with.
    public enum HTTPVersion: String, Sendable, Hashable {
        /// HTTP/1.0.
        case http1_0 = "HTTP/1.0"
        /// HTTP/1.1.
        case http1_1 = "HTTP/1.1"
        /// HTTP/2.
        case http2 = "HTTP/2"
        /// HTTP/3.
        case http3 = "HTTP/3"
        /// No response was received over the network (for example a stubbed response).
        case none = "none"
    }
}
