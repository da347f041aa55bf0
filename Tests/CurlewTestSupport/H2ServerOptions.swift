// Curlew — how an HTTP/2 test server is configured: the command-line options of h2_server.py.

/// How an ``H2TestServer`` is configured: the command-line options of `h2_server.py`.
package struct H2ServerOptions: Sendable {
    /// The certificate and key to serve over TLS; nil: cleartext (HTTP/2 by prior knowledge, or HTTP/1.1).
    package var identity: TLSFixtures.Identity?
    /// The ALPN protocols offered over TLS; empty: the server's default, `h2` then `http/1.1`.
    package var alpn: [String] = []
    /// SETTINGS_MAX_CONCURRENT_STREAMS, the most streams the server lets one connection open at once.
    package var maxConcurrentStreams = 250
    /// Log connections, GOAWAYs and errors to the server's stderr (see ``H2TestServer/standardError``).
    package var verbose = false

    package init(identity: TLSFixtures.Identity?) {
        self.identity = identity
    }

    /// HTTPS serving `identity` (its chain).
    package static func tls(_ identity: TLSFixtures.Identity) -> H2ServerOptions {
        H2ServerOptions(identity: identity)
    }

    /// Cleartext.
    package static var cleartext: H2ServerOptions { H2ServerOptions(identity: nil) }

    /// The script's command line for these options.
    package var arguments: [String] {
        var arguments = ["--max-concurrent-streams", String(maxConcurrentStreams)]
        if let identity { arguments += ["--cert", identity.chain, "--key", identity.key] }
        for protocolName in alpn { arguments += ["--alpn", protocolName] }
        if verbose { arguments.append("--verbose") }
        return arguments
    }
}
