// Curlew — a session's TLS settings turned into the libcurl options it means, decided once per session.

import CCurl
import CCurlShims

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The libcurl TLS options for a session, worked out once from its ``SessionConfiguration/TLS``.
///
/// The system store is the one Curlew found (``SystemTrustStore``), never libcurl's compiled-in path,
/// which names the layout of the distribution the library was built on. Trust is set up so libcurl's
/// CA-store cache works whenever it can: the system bundle as `CURLOPT_CAINFO` with `CURLOPT_CAPATH`
/// cleared (Debian's libcurl sets both by default, which turns the cache off and parses the whole bundle
/// for every new connection). Where the system store must be combined with custom certificates it is used
/// as a hashed directory, which OpenSSL reads lazily, or, on a system without one, appended to them in
/// memory.
struct TLSSetup: Sendable {
    let caInfo: String?
    let caPath: String?
    let caBlob: [UInt8]?
    /// Nothing was found for the system store: libcurl's own default stays in force.
    let keepsLibcurlDefault: Bool
    let verifiesPeer: Bool
    let minimumVersion: Int
    let sessionResumption: Bool
    let clientIdentity: ClientIdentity?
    /// `sha256//a;sha256//b` per lowercased host.
    let pins: [String: String]

    init(_ configuration: SessionConfiguration.TLS, store: SystemTrustStore = .current) {
        let roots = configuration.trustRoots
        var caInfo: String?
        var caPath: String?
        var caBlob: [UInt8]?
        var keepsDefault = false
        switch roots.source {
        case .system:
            keepsDefault = store.source == .libcurlDefault
            caInfo = store.bundle
            caPath = store.bundle == nil ? store.directory : nil
        case .file(let path):
            caInfo = path
            if roots.includesSystem {
                if let directory = store.directory {
                    caPath = directory
                } else if let bundle = store.bundle, let combined = Self.concatenated([path, bundle]) {
                    // libcurl ignores CURLOPT_CAINFO when a blob is set: both files go in the blob.
                    caInfo = nil
                    caBlob = combined
                }
            }
        case .directory(let path):
            // OpenSSL takes a colon-separated list of hashed directories, and a file beside them.
            caPath = roots.includesSystem ? [path, store.directory].compactMap { $0 }.joined(separator: ":") : path
            caInfo = roots.includesSystem && store.directory == nil ? store.bundle : nil
        case .pem(let bytes):
            caBlob = bytes
            if roots.includesSystem {
                if let directory = store.directory {
                    caPath = directory
                } else if let bundle = store.bundle, let system = Self.concatenated([bundle]) {
                    caBlob = bytes + [UInt8(ascii: "\n")] + system
                }
            }
        }
        self.caInfo = caInfo
        self.caPath = caPath
        self.caBlob = caBlob
        keepsLibcurlDefault = keepsDefault
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

    /// The files' bytes one after the other (PEM blocks may follow one another), or nil when one cannot
    /// be read: the file alone is then given to libcurl, whose failure names it.
    private static func concatenated(_ paths: [String]) -> [UInt8]? {
        var bytes: [UInt8] = []
        for path in paths {
            guard let contents = try? FileContents.read(atPath: path) else { return nil }
            bytes += contents
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }
}

extension EasyHandle {
    /// Applies the session's TLS setup, with a request's own client identity and pins when it has them.
    func applyTLS(_ setup: TLSSetup, host: String, options: TransferOptions, identities: inout ClientIdentityVariants) {
        set(CURLOPT_SSL_VERIFYPEER, setup.verifiesPeer ? 1 : 0)
        set(CURLOPT_SSL_VERIFYHOST, setup.verifiesPeer ? 2 : 0)
        set(CURLOPT_SSLVERSION, setup.minimumVersion)
        // Always both (nil clears libcurl's built-in default, which would otherwise stay in force), unless
        // no system store was found and that default is all there is.
        if !setup.keepsLibcurlDefault {
            setOptionalString(CURLOPT_CAINFO, setup.caInfo)
            setOptionalString(CURLOPT_CAPATH, setup.caPath)
        }
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
