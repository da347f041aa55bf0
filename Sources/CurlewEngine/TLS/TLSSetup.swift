// Curlew — a TLSConfiguration turned into the libcurl options it means, decided once per session.

import CCurl
import CCurlShims

/// The libcurl TLS options for a session, worked out once from its ``TLSConfiguration``.
///
/// Trust is set up so libcurl's CA-store cache works whenever it can: the system store as
/// `CURLOPT_CAINFO` with `CURLOPT_CAPATH` cleared (Debian's libcurl sets both by default, which turns
/// the cache off and parses the whole bundle for every new connection). Where the system store must
/// be combined with custom certificates it is used as a hashed directory, which OpenSSL reads lazily.
struct TLSSetup: Sendable {
    let caInfo: String?
    let caPath: String?
    let caBlob: [UInt8]?
    let verifiesPeer: Bool
    let minimumVersion: Int
    let sessionResumption: Bool
    let clientIdentity: ClientIdentity?
    /// `sha256//a;sha256//b` per lowercased host.
    let pins: [String: String]

    init(_ configuration: TLSConfiguration) {
        let bundle = Self.systemBundle
        let directory = Self.systemDirectory
        let roots = configuration.trustRoots
        switch roots.source {
        case .system:
            caInfo = bundle
            caPath = bundle == nil ? directory : nil
            caBlob = nil
        case .file(let path):
            caInfo = path
            caPath = roots.includesSystem ? directory : nil
            caBlob = nil
        case .directory(let path):
            caInfo = nil
            // OpenSSL takes a colon-separated list of hashed directories.
            caPath = roots.includesSystem ? [path, directory].compactMap { $0 }.joined(separator: ":") : path
            caBlob = nil
        case .pem(let bytes):
            caInfo = nil
            caPath = roots.includesSystem ? directory : nil
            caBlob = bytes
        }
        verifiesPeer = configuration.verifiesPeer
        minimumVersion = Int(configuration.minimumVersion == .tls1_3 ? CURL_SSLVERSION_TLSv1_3 : CURL_SSLVERSION_TLSv1_2)
        sessionResumption = configuration.sessionResumption
        clientIdentity = configuration.clientIdentity
        var pins: [String: String] = [:]
        for (host, list) in configuration.pinnedPublicKeys where !list.isEmpty {
            pins[host.lowercased()] = list.joined(separator: ";")
        }
        self.pins = pins
    }

    /// The system bundle libcurl was built with (Debian: `/etc/ssl/certs/ca-certificates.crt`).
    static let systemBundle: String? = {
        guard let info = curlew_version_info(), let path = info.pointee.cainfo else { return nil }
        return String(cString: path)
    }()

    /// The system's hashed certificate directory libcurl was built with (Debian: `/etc/ssl/certs`).
    static let systemDirectory: String? = {
        guard let info = curlew_version_info(), let path = info.pointee.capath else { return nil }
        return String(cString: path)
    }()
}

extension EasyHandle {
    /// Applies the session's TLS setup, with a request's own client identity and pins when it has them.
    func applyTLS(_ setup: TLSSetup, host: String, options: TransferOptions, identities: inout ClientIdentityVariants) {
        set(CURLOPT_SSL_VERIFYPEER, setup.verifiesPeer ? 1 : 0)
        set(CURLOPT_SSL_VERIFYHOST, setup.verifiesPeer ? 2 : 0)
        set(CURLOPT_SSLVERSION, setup.minimumVersion)
        // Always both: nil clears libcurl's built-in default, which would otherwise stay in force.
        setOptionalString(CURLOPT_CAINFO, setup.caInfo)
        setOptionalString(CURLOPT_CAPATH, setup.caPath)
        if let blob = setup.caBlob { setBlob(CURLOPT_CAINFO_BLOB, blob) }
        if !setup.sessionResumption { set(CURLOPT_SSL_SESSIONID_CACHE, 0) }
        if let identity = options.clientIdentity ?? setup.clientIdentity {
            apply(identity, certificate: identities.certificate(for: identity))
        }
        if let pins = options.pinnedPublicKeys.map({ $0.joined(separator: ";") }) ?? setup.pins[host], !pins.isEmpty {
            set(CURLOPT_PINNEDPUBLICKEY, string: pins)
        }
    }

    private func apply(_ identity: ClientIdentity, certificate: ClientIdentity.Source) {
        set(CURLOPT_SSLCERTTYPE, string: "PEM")
        switch certificate {
        case .file(let path): set(CURLOPT_SSLCERT, string: path)
        case .pem(let bytes): setBlob(CURLOPT_SSLCERT_BLOB, bytes)
        }
        set(CURLOPT_SSLKEYTYPE, string: "PEM")
        switch identity.privateKey {
        case .file(let path): set(CURLOPT_SSLKEY, string: path)
        case .pem(let bytes): setBlob(CURLOPT_SSLKEY_BLOB, bytes)
        }
        if let password = identity.password { set(CURLOPT_KEYPASSWD, string: password) }
    }

    private func setOptionalString(_ option: CURLoption, _ value: String?) {
        if let value { set(option, string: value) } else { set(option, nil) }
    }

    /// Sets a blob option; libcurl keeps its own copy.
    func setBlob(_ option: CURLoption, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { curlew_easy_setopt_blob(raw, option, $0.baseAddress, $0.count) }
    }
}
