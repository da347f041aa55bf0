// Curlew — why a TLS connection failed, for callers that branch on it.

/// Why a TLS connection failed; ``TransportError/tlsReason`` carries it for
/// ``TransportError/Code/tlsFailure`` errors.
public enum TLSFailureReason: String, Sendable, Hashable {
    /// The server's certificate was not issued by a trusted authority.
    case untrustedIssuer
    /// The server's certificate (or its chain's root) is self-signed and not trusted.
    case selfSigned
    /// The certificate is valid but not for the host name requested.
    case hostnameMismatch
    /// The certificate has expired.
    case expired
    /// The certificate is not valid yet.
    case notYetValid
    /// The server's public key matches none of the host's pins.
    case pinMismatch
    /// The server refused the client certificate, or required one and none was sent.
    case clientCertificateRejected
    /// The configured client certificate or key could not be used (unreadable, wrong password, mismatched).
    case clientCertificateUnusable
    /// The CA certificates configured for verification could not be loaded.
    case trustStoreUnusable
    /// The handshake failed otherwise (no shared protocol version or cipher, a TLS alert, not TLS at all).
    case handshakeFailed
}
