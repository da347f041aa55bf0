// Curlew — how an nghttpd test server is configured: nghttpd's options and its documents.

/// How an ``NghttpdServer`` is configured: `nghttpd`'s options.
package struct NghttpdOptions: Sendable {
    /// The certificate and key to serve over TLS (ALPN `h2` only); nil: `--no-tls` (prior knowledge only).
    package var identity: TLSFixtures.Identity?
    /// `--max-concurrent-streams` (nghttpd's default is 100).
    package var maxConcurrentStreams: Int?
    /// `--trailer`, one per field (`name: value`); sent only after a non-empty body.
    package var trailers: [String]
    /// `--echo-upload`: POST and PUT bodies are sent back.
    package var echoUpload: Bool
    /// Files of the document root, by name.
    package var documents: [String: String]

    package init(
        identity: TLSFixtures.Identity?, maxConcurrentStreams: Int? = nil, trailers: [String] = [],
        echoUpload: Bool = false, documents: [String: String] = [:]
    ) {
        self.identity = identity
        self.maxConcurrentStreams = maxConcurrentStreams
        self.trailers = trailers
        self.echoUpload = echoUpload
        self.documents = documents
    }

    /// nghttpd's command line for these options.
    package func arguments(port: Int, documentRoot: String) -> [String] {
        var arguments = ["-a", "127.0.0.1", "-d", documentRoot]
        if let maxConcurrentStreams { arguments += ["--max-concurrent-streams=\(maxConcurrentStreams)"] }
        for trailer in trailers { arguments += ["--trailer=\(trailer)"] }
        if echoUpload { arguments.append("--echo-upload") }
        if let identity {
            arguments += [String(port), identity.key, identity.chain]
        } else {
            arguments += ["--no-tls", String(port)]
        }
        return arguments
    }
}
