// Curlew — how a session verifies servers and identifies itself over TLS.

extension SessionConfiguration {
    /// TLS settings of a session: which certificate authorities are trusted, which public keys are pinned
    /// per host, the client certificate, the lowest protocol version, and session resumption.
    ///
    /// Defaults verify every server against the system's trust store, through libcurl's cached CA store:
    /// the bundle is parsed once per session (about 1.5 ms of CPU per new connection, against 24–32 ms
    /// when Debian's default settings make libcurl parse it for every connection).
    public struct TLS: Sendable, Hashable {
        /// Which certificate authorities are trusted. Default ``TrustRoots/system``.
        public var trustRoots: TrustRoots = .system
        /// Verify the server's certificate chain and host name. Default on; turn off only for tests.
        public var verifiesPeer: Bool = true
        /// Public-key pins per host name (lowercased), each `sha256//<base64 of the SHA-256 of the
        /// certificate's SubjectPublicKeyInfo>`. A connection to a pinned host succeeds only when the leaf
        /// certificate's key matches one of the host's pins (list several to rotate keys); hosts without
        /// pins are verified as usual. libcurl checks the leaf's key only, not the chain's.
        ///
        /// To make a pin from a certificate file:
        /// `openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | openssl base64`.
        public var pinnedPublicKeys: [String: [String]] = [:]
        /// The certificate this session presents when a server asks for one (mutual TLS); nil for none.
        public var clientIdentity: ClientIdentity?
        /// The lowest TLS version accepted. Default ``SessionConfiguration/TLS/Version/tls1_2``.
        public var minimumVersion: SessionConfiguration.TLS.Version = .tls1_2
        /// Resume TLS sessions across connections to a host (shared by all of the session's transfers),
        /// saving a full handshake per new connection. Default on.
        public var sessionResumption: Bool = true

        /// The default: system trust, verification on, no pins, no client certificate, TLS 1.2 or later.
        public init() {}
    }
}

extension SessionConfiguration.TLS {
    /// A TLS protocol version.
    public enum Version: Sendable, Hashable {
        /// TLS 1.2.
        case tls1_2
        /// TLS 1.3.
        case tls1_3
    }
}

/// Certificate authorities to trust.
public struct TrustRoots: Sendable, Hashable {
    enum Source: Sendable, Hashable {
        case system
        case file(String)
        case directory(String)
        case pem([UInt8])
    }

    let source: Source
    /// Whether the system's trust store is trusted too.
    let includesSystem: Bool

    /// The system's trust store (on Debian, `/etc/ssl/certs/ca-certificates.crt`).
    public static let system = TrustRoots(source: .system, includesSystem: true)

    /// The certificates in a PEM file (one or more certificates), instead of or in addition to the system's.
    public static func file(_ path: String, includingSystem: Bool = false) -> TrustRoots {
        TrustRoots(source: .file(path), includesSystem: includingSystem)
    }

    /// The certificates in a directory prepared with `openssl rehash` (each certificate under its
    /// subject-hash name), instead of or in addition to the system's.
    public static func directory(_ path: String, includingSystem: Bool = false) -> TrustRoots {
        TrustRoots(source: .directory(path), includesSystem: includingSystem)
    }

    /// Certificates in memory, in PEM form (one or more), instead of or in addition to the system's.
    ///
    /// A file or a directory is cheaper per connection: libcurl compares in-memory certificates on
    /// every connection-reuse check and cannot cache a store built from them.
    public static func pem(_ bytes: some Sequence<UInt8>, includingSystem: Bool = false) -> TrustRoots {
        TrustRoots(source: .pem(Array(bytes)), includesSystem: includingSystem)
    }
}

/// A client certificate and its private key, for servers that ask for one (mutual TLS).
public struct ClientIdentity: Sendable, Hashable {
    /// Where a PEM certificate or key comes from.
    public enum Source: Sendable, Hashable {
        /// A PEM file.
        case file(String)
        /// PEM bytes in memory.
        case pem([UInt8])
    }

    /// The certificate (PEM; it may be followed by its intermediates).
    public var certificate: Source
    /// The private key (PEM).
    public var privateKey: Source
    /// The key's password, when it is encrypted.
    public var password: String?

    /// Creates an identity.
    public init(certificate: Source, privateKey: Source, password: String? = nil) {
        self.certificate = certificate
        self.privateKey = privateKey
        self.password = password
    }
}
