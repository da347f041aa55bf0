// Curlew — how a TLS test server is configured: the command-line options of tls_server.py.

/// How a ``TLSTestServer`` is configured: the command-line options of `tls_server.py`.
package struct TLSServerOptions: Sendable {
    package enum TLSVersion: String, Sendable {
        case v1_2 = "1.2"
        case v1_3 = "1.3"
    }

    /// The PEM certificate the server presents, optionally followed by its intermediates.
    package var certificate: String
    /// The certificate's unencrypted PEM key.
    package var key: String
    /// Intermediates sent after ``certificate`` (`--chain`).
    package var chain: String? = nil
    /// CA file client certificates are verified with; setting it makes the server ask for one.
    package var clientCA: String? = nil
    /// Refuse clients without a valid certificate (else a client certificate is optional).
    package var requireClientCertificate = false
    package var minimumTLSVersion: TLSVersion? = nil
    package var maximumTLSVersion: TLSVersion? = nil
    /// ALPN protocols to advertise; empty: no ALPN.
    package var alpn: [String] = []
    /// Whether session tickets are issued. Off: no resumption over TLS 1.3; TLS 1.2 can still resume
    /// by session ID.
    package var sessionTickets = true
    /// Whether sessions can be resumed at all; false gives every connection a fresh TLS context.
    package var resumption = true
    /// Paths answered with `302 Found` and `Location:` the URL (`--redirect PATH=URL`), query ignored.
    package var redirects: [String: String] = [:]
    /// Log requests and handshake failures to the server's stderr (see ``TLSTestServer/standardError``).
    package var verbose = false

    /// Serves `certificate` with `key`.
    package init(certificate: String, key: String) {
        self.certificate = certificate
        self.key = key
    }

    /// Serves a fixture identity, with its chain (``TLSFixtures/Identity/chain``).
    package init(serving identity: TLSFixtures.Identity) {
        self.init(certificate: identity.chain, key: identity.key)
    }

    /// The script's command line for these options.
    package var arguments: [String] {
        var arguments = ["--cert", certificate, "--key", key]
        if let chain { arguments += ["--chain", chain] }
        if let clientCA { arguments += ["--client-ca", clientCA] }
        if requireClientCertificate { arguments.append("--require-client-cert") }
        if let minimumTLSVersion { arguments += ["--tls-min", minimumTLSVersion.rawValue] }
        if let maximumTLSVersion { arguments += ["--tls-max", maximumTLSVersion.rawValue] }
        for protocolName in alpn { arguments += ["--alpn", protocolName] }
        if !sessionTickets { arguments += ["--session-tickets", "off"] }
        if !resumption { arguments.append("--no-resumption") }
        for (path, url) in redirects.sorted(by: { $0.key < $1.key }) { arguments += ["--redirect", "\(path)=\(url)"] }
        if verbose { arguments.append("--verbose") }
        return arguments
    }
}
