// Curlew — client identities that share a certificate kept apart in libcurl's caches.

/// Gives each client identity of a session a certificate libcurl can tell apart.
///
/// libcurl matches kept-alive connections and cached TLS sessions by the client certificate (its
/// path or bytes) but not by the private key or its password. Two identities with the same certificate
/// and different keys would share connections and resumed sessions: a request would go out under an
/// identity it never had. The first identity seen with a certificate uses it as given; each further one
/// gets the same certificate spelt differently — the file path with `./` segments before the file name,
/// PEM bytes with trailing newlines — which reads the same and compares differently.
///
/// Loop thread only (it lives in `HandleDefaults`).
struct ClientIdentityVariants {
    private var identities: [ClientIdentity.Source: [ClientIdentity]] = [:]
    /// The last identity looked up and its certificate: most requests reuse the one before.
    private var last: (identity: ClientIdentity, certificate: ClientIdentity.Source)?

    /// The certificate to give libcurl for `identity`.
    mutating func certificate(for identity: ClientIdentity) -> ClientIdentity.Source {
        if let last, last.identity == identity { return last.certificate }
        let variant: Int
        if let index = identities[identity.certificate]?.firstIndex(of: identity) {
            variant = index
        } else {
            variant = identities[identity.certificate, default: []].count
            identities[identity.certificate, default: []].append(identity)
        }
        let certificate = Self.spelling(of: identity.certificate, variant: variant)
        last = (identity, certificate)
        return certificate
    }

    /// `source` spelt the `variant`th way (0: as given).
    static func spelling(of source: ClientIdentity.Source, variant: Int) -> ClientIdentity.Source {
        guard variant > 0 else { return source }
        switch source {
        case .file(let path):
            let dots = String(repeating: "./", count: variant)
            guard let slash = path.lastIndex(of: "/") else { return .file(dots + path) }
            return .file(String(path[...slash]) + dots + String(path[path.index(after: slash)...]))
        case .pem(let bytes):
            // PEM readers skip what follows the last END line.
            return .pem(bytes + [UInt8](repeating: UInt8(ascii: "\n"), count: variant))
        }
    }
}
