// Curlew — per-request overrides of a session's settings.

/// Settings one request overrides; nil keeps the session's.
///
/// Set them on a ``TransportRequest`` (a request closure or a plugin can), or on a target's or an
/// endpoint's `transferOptions` in the Curlew module.
public struct TransferOptions: Sendable, Hashable {
    /// Overrides ``SessionConfiguration/connectTimeout``.
    public var connectTimeout: Duration?
    /// Overrides ``SessionConfiguration/idleTimeout`` (the total timeout is ``TransportRequest/timeout``).
    public var idleTimeout: Duration?
    /// Overrides ``SessionConfiguration/maxResponseBodySize``.
    public var maxResponseBodySize: Int?
    /// A client certificate for this request instead of the session's; connections made with different
    /// identities are never shared.
    public var clientIdentity: ClientIdentity?
    /// Public-key pins for this request's host instead of the session's (see
    /// ``TLSConfiguration/pinnedPublicKeys``).
    public var pinnedPublicKeys: [String]?
    /// Connect through this Unix domain socket instead of TCP; the URL still names the host (for the
    /// `Host` field and TLS). Connections through different sockets are never shared.
    public var unixSocketPath: String?

    /// No overrides.
    public init(
        connectTimeout: Duration? = nil, idleTimeout: Duration? = nil, maxResponseBodySize: Int? = nil,
        clientIdentity: ClientIdentity? = nil, pinnedPublicKeys: [String]? = nil, unixSocketPath: String? = nil
    ) {
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.maxResponseBodySize = maxResponseBodySize
        self.clientIdentity = clientIdentity
        self.pinnedPublicKeys = pinnedPublicKeys
        self.unixSocketPath = unixSocketPath
    }

    /// Whether any setting is overridden.
    public var isEmpty: Bool { self == TransferOptions() }
}
