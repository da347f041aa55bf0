// Curlew — certificates, keys and pins made at test time by Tests/Servers/tls_fixtures.py.
//
// `TLSFixtures.shared()` runs the script once per test process into a fresh temporary directory
// (removed at exit). It needs `python3` with the `cryptography` package (set CURLEW_TEST_PYTHON to use
// another interpreter) and the `openssl` command.

import CurlewEngine
import Foundation

/// The certificates, keys and pins `tls_fixtures.py` made for this test process. Every path is absolute.
package struct TLSFixtures: Sendable {
    /// A certificate and its private key (PEM files). `chain` is what a server presents: the
    /// certificate followed by its intermediates (the certificate alone when it has none).
    package struct Identity: Sendable, Hashable {
        package let certificate: String
        package let key: String
        package let chain: String
    }

    /// SPKI pins in libcurl's `CURLOPT_PINNEDPUBLICKEY` form, `sha256//<base64>`.
    package struct Pins: Sendable, Hashable {
        package let leaf: String
        package let intermediate: String
        package let ca: String
        /// Every certificate's pin, by fixture name (`leaf_via_intermediate`, `self_signed`, …).
        package let all: [String: String]
    }

    /// The directory holding every file.
    package let directory: String
    /// The root CA every trusted certificate chains to.
    package let ca: Identity
    /// A directory holding `ca` under its OpenSSL subject hash (`<hash>.0`), for CAPATH.
    package let caHashedDirectory: String
    /// The CA's OpenSSL subject hash (`openssl x509 -hash`).
    package let caSubjectHash: String
    /// `localhost`, `127.0.0.1`, `a.test` and `*.a.test`, signed by ``ca``.
    package let leaf: Identity
    /// An intermediate CA (pathlen 0) signed by ``ca``.
    package let intermediate: Identity
    /// `localhost` and `127.0.0.1`, signed by ``intermediate``; its `chain` includes the intermediate.
    package let leafViaIntermediate: Identity
    /// `localhost` and `127.0.0.1`, its own issuer.
    package let selfSigned: Identity
    /// `localhost` and `127.0.0.1`, signed by ``ca``, expired yesterday.
    package let expired: Identity
    /// `localhost` and `127.0.0.1`, signed by ``ca``, valid from tomorrow.
    package let notYetValid: Identity
    /// `other.example` only, signed by ``ca``.
    package let wrongHost: Identity
    /// A client certificate (clientAuth, CN `curlew-test-client`) signed by ``ca``.
    package let client: Identity
    /// ``client``'s key, encrypted (PKCS#8) with ``clientKeyPassword``.
    package let clientKeyEncrypted: String
    /// The password of ``clientKeyEncrypted``.
    package let clientKeyPassword: String
    /// A second root CA, unrelated to ``ca``.
    package let otherCA: Identity
    /// A client certificate (CN `curlew-untrusted-client`) signed by ``otherCA``.
    package let clientUntrusted: Identity
    /// A root CA with a P-384 key (signing with ECDSA-SHA384).
    package let caP384: Identity
    /// `localhost` and `127.0.0.1`, a P-384 key, signed by ``caP384``: a full handshake costs about
    /// 1.5 ms more than with the P-256 certificates, which a resumed handshake skips.
    package let leafP384: Identity
    /// The SPKI pins.
    package let pins: Pins

    /// The CN of ``client``.
    package static let clientCommonName = "curlew-test-client"

    // `Locked` (a pthread mutex), not `Mutex`: the thread sanitizer cannot see `Mutex`'s futex and
    // reported the first concurrent calls from several suites as a race.
    private static let cache = Locked<Task<TLSFixtures, any Error>?>(nil)
    private static let directoryToRemove = Locked<String?>(nil)

    /// The fixtures of this test process, made on first use (in a fraction of a second) and shared.
    package static func shared() async throws -> TLSFixtures {
        let task = cache.withLock { cached in
            if let cached { return cached }
            let task = Task { try await generate() }
            cached = task
            return task
        }
        return try await task.value
    }

    private static func generate() async throws -> TLSFixtures {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("curlew-tls-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        directoryToRemove.withLock { $0 = directory }
        atexit { TLSFixtures.removeDirectory() }
        let output = try await TestServerScripts.run("tls_fixtures.py", arguments: [directory], timeout: .seconds(30))
        guard output.status == 0 else {
            throw TestInfrastructureError(
                description: "tls_fixtures.py failed (exit \(output.status)): \(output.standardError)")
        }
        do {
            return try TLSFixtures(manifest: JSONDecoder().decode(Manifest.self, from: output.standardOutput))
        } catch {
            throw TestInfrastructureError(
                description: "tls_fixtures.py printed an unexpected manifest (\(error)): \(output.standardOutput.text)")
        }
    }

    private static func removeDirectory() {
        guard let directory = directoryToRemove.withLock({ $0 }) else { return }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// What `tls_fixtures.py` prints.
    private struct Manifest: Decodable {
        let directory: String
        let files: [String: String]
        let pins: [String: String]
        let clientKeyPassword: String
        let caSubjectHash: String

        enum CodingKeys: String, CodingKey {
            case directory, files, pins
            case clientKeyPassword = "client_key_password"
            case caSubjectHash = "ca_subject_hash"
        }

        func file(_ name: String) throws -> String {
            guard let path = files[name] else {
                throw TestInfrastructureError(description: "tls_fixtures.py wrote no `\(name)`")
            }
            return path
        }

        func pin(_ name: String) throws -> String {
            guard let pin = pins[name] else {
                throw TestInfrastructureError(description: "tls_fixtures.py printed no pin for `\(name)`")
            }
            return pin
        }

        func identity(_ name: String) throws -> Identity {
            let certificate = try file(name)
            return Identity(certificate: certificate, key: try file(name + ".key"), chain: files[name + ".chain"] ?? certificate)
        }
    }

    private init(manifest: Manifest) throws {
        directory = manifest.directory
        ca = try manifest.identity("ca")
        caHashedDirectory = try manifest.file("ca.hashed")
        caSubjectHash = manifest.caSubjectHash
        leaf = try manifest.identity("leaf")
        intermediate = try manifest.identity("intermediate")
        leafViaIntermediate = try manifest.identity("leaf_via_intermediate")
        selfSigned = try manifest.identity("self_signed")
        expired = try manifest.identity("expired")
        notYetValid = try manifest.identity("not_yet_valid")
        wrongHost = try manifest.identity("wrong_host")
        client = try manifest.identity("client")
        clientKeyEncrypted = try manifest.file("client.key.encrypted")
        clientKeyPassword = manifest.clientKeyPassword
        otherCA = try manifest.identity("other_ca")
        clientUntrusted = try manifest.identity("client_untrusted")
        caP384 = try manifest.identity("ca_p384")
        leafP384 = try manifest.identity("leaf_p384")
        pins = Pins(
            leaf: try manifest.pin("leaf"), intermediate: try manifest.pin("intermediate"), ca: try manifest.pin("ca"),
            all: manifest.pins)
    }
}
