// Curlew — the engine's TLS options against real TLS servers on loopback: trust roots, every kind of
// bad certificate with its typed reason, public-key pins, client certificates (TLS 1.3 and 1.2), the
// minimum version, session resumption, TLS identities in the pool, and https→http redirects.
//
// Certificates are made at test time (TLSFixtures); servers are Tests/Servers/tls_server.py. What the
// `curl` command does in each case is recorded in Tests/Servers/check_fixtures.sh.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// Runs `body` with a session made from `configure`, and always shuts the session down.
private func withSession<T>(
    _ configure: (inout SessionConfiguration) -> Void, _ body: (CurlSession) async throws -> T
) async throws -> T {
    var configuration = SessionConfiguration()
    configure(&configuration)
    let session = try CurlSession(configuration: configuration)
    return try await ensuring({ try await body(session) }, cleanUp: { await session.shutdown() })
}

/// Runs `body` with a session that trusts `roots`.
private func withSession<T>(trusting roots: TrustRoots, _ body: (CurlSession) async throws -> T) async throws -> T {
    try await withSession({ $0.tls.trustRoots = roots }, body)
}

/// Runs `body` with the shared server for `options` (``TLSTestServer/shared(_:)``): other tests use it at
/// the same time, so a test may compare the connection numbers of its own requests, never expect
/// particular ones.
private func withSharedTLSServer<T>(
    _ options: TLSServerOptions, _ body: (TLSTestServer) async throws -> T
) async throws -> T {
    try await body(try await TLSTestServer.shared(options))
}

/// A GET of `url` with this request's options changed by `configure`.
private func get(_ url: String, _ configure: (inout TransferOptions) -> Void = { _ in }) -> TransportRequest {
    var request = TransportRequest(url: url)
    configure(&request.options)
    return request
}

/// The TLS failure of `request`, checked to be a ``TransportError/Code/tlsFailure`` with curl's `curlCode`.
private func tlsFailure(
    _ session: CurlSession, _ request: TransportRequest, curlCode: Int,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> TLSFailureReason? {
    let error = await transportError(
        { try await session.execute(request) }, sourceLocation: sourceLocation)
    #expect(error?.code == .tlsFailure, "\(String(describing: error))", sourceLocation: sourceLocation)
    #expect(error?.curlCode == curlCode, "\(String(describing: error))", sourceLocation: sourceLocation)
    if error?.code == .tlsFailure {
        #expect(error?.tlsReason != nil, sourceLocation: sourceLocation)
    } else {
        #expect(error?.tlsReason == nil, sourceLocation: sourceLocation)
    }
    return error?.tlsReason
}

/// The bytes of a file.
private func contents(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Where a test's trusted CA comes from.
enum TrustSource: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case file, directory, pem

    var testDescription: String { rawValue }

    func roots(_ fixtures: TLSFixtures, includingSystem: Bool) throws -> TrustRoots {
        switch self {
        case .file: .file(fixtures.ca.certificate, includingSystem: includingSystem)
        case .directory: .directory(fixtures.caHashedDirectory, includingSystem: includingSystem)
        case .pem: .pem(try contents(fixtures.ca.certificate), includingSystem: includingSystem)
        }
    }
}

/// A server certificate that verification must refuse, and why.
enum BadCertificate: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case selfSigned, expired, notYetValid, wrongHost

    var testDescription: String { rawValue }

    func identity(_ fixtures: TLSFixtures) -> TLSFixtures.Identity {
        switch self {
        case .selfSigned: fixtures.selfSigned
        case .expired: fixtures.expired
        case .notYetValid: fixtures.notYetValid
        case .wrongHost: fixtures.wrongHost
        }
    }

    var reason: TLSFailureReason {
        switch self {
        case .selfSigned: .selfSigned
        case .expired: .expired
        case .notYetValid: .notYetValid
        case .wrongHost: .hostnameMismatch
        }
    }
}

@Suite struct TLSTests {
    // MARK: Trust

    @Test(arguments: TrustSource.allCases, [false, true])
    func theTestCAIsTrustedFromEverySource(source: TrustSource, includingSystem: Bool) async throws {
        let fixtures = try await TLSFixtures.shared()
        let roots = try source.roots(fixtures, includingSystem: includingSystem)
        try await withSharedTLSServer(TLSServerOptions(serving: fixtures.leaf)) { server in
            try await withSession(trusting: roots) { session in
                for host in [TLSTestServer.Host.ipv4, .localhost] {
                    let response = try await session.execute(get(server.url("/trusted", host: host)))
                    #expect(response.status.code == 200)
                    let echo = try TLSEcho(response)
                    #expect(echo.path == "/trusted")
                    #expect(echo.tlsVersion == "TLSv1.3")
                }
            }
        }
    }

    @Test func systemTrustAloneRefusesTheTestCA() async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withSharedTLSServer(TLSServerOptions(serving: fixtures.leaf)) { server in
            // The same server is trusted with the test CA...
            try await withSession(trusting: .file(fixtures.ca.certificate)) { session in
                let response = try await session.execute(get(server.url()))
                #expect(response.status.code == 200)
            }
            // ...and refused by the system store alone, the default and spelled out.
            for roots in [TrustRoots.system, SessionConfiguration().tls.trustRoots] {
                try await withSession(trusting: roots) { session in
                    #expect(await tlsFailure(session, get(server.url()), curlCode: 60) == .untrustedIssuer)
                }
            }
        }
    }

    @Test func anUnrelatedCAOrAnIntermediateDoesNotMakeTheLeafTrusted() async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withSharedTLSServer(TLSServerOptions(serving: fixtures.leaf)) { server in
            try await withSession(trusting: .file(fixtures.ca.certificate)) { session in
                let response = try await session.execute(get(server.url()))
                #expect(response.status.code == 200)
            }
            for trusted in [fixtures.otherCA.certificate, fixtures.intermediate.certificate] {
                try await withSession(trusting: .file(trusted)) { session in
                    #expect(await tlsFailure(session, get(server.url()), curlCode: 60) == .untrustedIssuer, "\(trusted)")
                }
            }
        }
    }

    @Test func aMissingCAFileIsAnUnusableTrustStore() async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withSharedTLSServer(TLSServerOptions(serving: fixtures.leaf)) { server in
            try await withSession(trusting: .file(fixtures.directory + "/missing-ca.pem")) { session in
                #expect(await tlsFailure(session, get(server.url()), curlCode: 77) == .trustStoreUnusable)
            }
        }
    }

    @Test(arguments: [TrustSource.file, .directory])
    func aServerSendingItsIntermediateIsTrustedThroughTheRoot(source: TrustSource) async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withSharedTLSServer(TLSServerOptions(serving: fixtures.leafViaIntermediate)) { server in
            try await withSession(trusting: try source.roots(fixtures, includingSystem: false)) { session in
                for host in [TLSTestServer.Host.ipv4, .localhost] {
                    let response = try await session.execute(get(server.url("/chain", host: host)))
                    #expect(response.status.code == 200)
                    #expect(try TLSEcho(response).path == "/chain")
                }
            }
        }
    }

    // MARK: Bad certificates

    @Test(arguments: BadCertificate.allCases)
    func badCertificatesFailWithTheirReason(bad: BadCertificate) async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withSharedTLSServer(TLSServerOptions(serving: fixtures.leaf)) { good in
            try await withSharedTLSServer(TLSServerOptions(serving: bad.identity(fixtures))) { server in
                // The bad server works: without verification it answers.
                try await withSession({ $0.tls.verifiesPeer = false }) { session in
                    let response = try await session.execute(get(server.url()))
                    #expect(response.status.code == 200)
                }
                try await withSession(trusting: .file(fixtures.ca.certificate)) { session in
                    // The same session verifies the good leaf...
                    let response = try await session.execute(get(good.url()))
                    #expect(response.status.code == 200)
                    // ...and refuses the bad one, by both names the other certificates carry.
                    for host in [TLSTestServer.Host.ipv4, .localhost] {
                        let reason = await tlsFailure(session, get(server.url("/", host: host)), curlCode: 60)
                        #expect(reason == bad.reason, "\(host)")
                    }
                }
                // What makes each one acceptable, proving the failure was about the named problem.
                switch bad {
                case .selfSigned:
                    try await withSession(trusting: .file(fixtures.selfSigned.certificate)) { session in
                        let response = try await session.execute(get(server.url()))
                        #expect(response.status.code == 200)
                    }
                case .wrongHost:
                    // The name the certificate carries, pointed at the server.
                    try await withSession({
                        $0.tls.trustRoots = .file(fixtures.ca.certificate)
                        $0.connections.hostOverrides = [
                            ConnectionOptions.HostOverride(host: "other.example", port: server.port, addresses: ["127.0.0.1"])
                        ]
                    }) { session in
                        let response = try await session.execute(get("https://other.example:\(server.port)/named"))
                        #expect(response.status.code == 200)
                        #expect(try TLSEcho(response).serverName == "other.example")
                    }
                case .expired, .notYetValid:
                    break  // no trust setting makes an out-of-date certificate acceptable
                }
            }
        }
    }

    // MARK: Pins

    @Test func pinningTheLeafPassesAndPinningItsIssuersFails() async throws {
        // libcurl compares the leaf's key only: the CA's and an intermediate's keys never match, even
        // when the server sends that intermediate in its chain.
        let fixtures = try await TLSFixtures.shared()
        let cases: [(TLSFixtures.Identity, String, [String], TLSFailureReason?)] = [
            (fixtures.leaf, "leaf", [fixtures.pins.leaf], nil),
            (fixtures.leaf, "ca", [fixtures.pins.ca], .pinMismatch),
            (fixtures.leaf, "intermediate", [fixtures.pins.intermediate], .pinMismatch),
            (fixtures.leaf, "rotation: intermediate, leaf", [fixtures.pins.intermediate, fixtures.pins.leaf], nil),
            (fixtures.leaf, "rotation: leaf, ca", [fixtures.pins.leaf, fixtures.pins.ca], nil),
            (fixtures.leafViaIntermediate, "intermediate in the chain", [fixtures.pins.intermediate], .pinMismatch),
            (fixtures.leafViaIntermediate, "ca of the chain", [fixtures.pins.ca], .pinMismatch),
            (
                fixtures.leafViaIntermediate, "leaf_via_intermediate",
                [try #require(fixtures.pins.all["leaf_via_intermediate"])], nil
            ),
        ]
        try await withSharedTLSServer(TLSServerOptions(serving: fixtures.leaf)) { leafServer in
            try await withSharedTLSServer(TLSServerOptions(serving: fixtures.leafViaIntermediate)) { chainServer in
                for (identity, label, pins, expected) in cases {
                    let server = identity == fixtures.leaf ? leafServer : chainServer
                    try await withSession({
                        $0.tls.trustRoots = .file(fixtures.ca.certificate)
                        $0.tls.pinnedPublicKeys = ["127.0.0.1": pins]
                    }) { session in
                        if let expected {
                            #expect(await tlsFailure(session, get(server.url()), curlCode: 90) == expected, "\(label)")
                        } else {
                            let response = try await session.execute(get(server.url()))
                            #expect(response.status.code == 200, "\(label)")
                        }
                    }
                }
            }
        }
    }

    @Test func onlyThePinnedHostIsPinned() async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withSharedTLSServer(TLSServerOptions(serving: fixtures.leaf)) { server in
            try await withSharedTLSServer(TLSServerOptions(serving: fixtures.selfSigned)) { selfSigned in
                // Host names are matched case-insensitively: "LocalHost" pins https://localhost.
                try await withSession({
                    $0.tls.trustRoots = .file(fixtures.ca.certificate)
                    $0.tls.pinnedPublicKeys = ["LocalHost": [fixtures.pins.intermediate]]
                }) { session in
                    // 127.0.0.1 has no pins: verified as usual, so the CA's leaf passes...
                    let response = try await session.execute(get(server.url("/", host: .ipv4)))
                    #expect(response.status.code == 200)
                    // ...and a self-signed certificate is still refused.
                    #expect(await tlsFailure(session, get(selfSigned.url("/", host: .ipv4)), curlCode: 60) == .selfSigned)
                    // The same server under the pinned name fails the pin.
                    #expect(await tlsFailure(session, get(server.url("/", host: .localhost)), curlCode: 90) == .pinMismatch)
                }
            }
        }
    }

    @Test func aRequestsPinsReplaceTheSessions() async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withSharedTLSServer(TLSServerOptions(serving: fixtures.leaf)) { server in
            // The session pins the wrong key; the request pins the right one.
            try await withSession({
                $0.tls.trustRoots = .file(fixtures.ca.certificate)
                $0.tls.pinnedPublicKeys = ["127.0.0.1": [fixtures.pins.intermediate]]
            }) { session in
                #expect(await tlsFailure(session, get(server.url("/session-pins")), curlCode: 90) == .pinMismatch)
                let response = try await session.execute(get(server.url("/own-pins")) { $0.pinnedPublicKeys = [fixtures.pins.leaf] })
                #expect(try TLSEcho(response).path == "/own-pins")
            }
            // The session pins the right key; the request pins the wrong one, while a connection the
            // session's pins verified is kept alive: it must not be reused for the request.
            try await withSession({
                $0.tls.trustRoots = .file(fixtures.ca.certificate)
                $0.tls.pinnedPublicKeys = ["127.0.0.1": [fixtures.pins.leaf]]
            }) { session in
                let first = try TLSEcho(try await session.execute(get(server.url("/session-pins"))))
                let reason = await tlsFailure(
                    session, get(server.url("/own-pins")) { $0.pinnedPublicKeys = [fixtures.pins.ca] }, curlCode: 90)
                #expect(reason == .pinMismatch)
                // The session's own connection is still there for requests without their own pins.
                let again = try TLSEcho(try await session.execute(get(server.url("/again"))))
                #expect(again.connection == first.connection)
                #expect(again.request == 2)
            }
        }
    }

    // MARK: Client certificates

    static func mutualTLS(_ fixtures: TLSFixtures, _ version: TLSServerOptions.TLSVersion) -> TLSServerOptions {
        var options = TLSServerOptions(serving: fixtures.leaf)
        options.clientCA = fixtures.ca.certificate
        options.requireClientCertificate = true
        options.maximumTLSVersion = version
        return options
    }

    static func identity(_ fixtures: TLSFixtures) -> ClientIdentity {
        ClientIdentity(certificate: .file(fixtures.client.certificate), privateKey: .file(fixtures.client.key))
    }

    @Test(arguments: [TLSServerOptions.TLSVersion.v1_3, .v1_2])
    func clientCertificatesAreAccepted(version: TLSServerOptions.TLSVersion) async throws {
        let fixtures = try await TLSFixtures.shared()
        let identities: [(String, ClientIdentity)] = [
            ("files", Self.identity(fixtures)),
            (
                "PEM bytes",
                ClientIdentity(
                    certificate: .pem(try contents(fixtures.client.certificate)),
                    privateKey: .pem(try contents(fixtures.client.key)))
            ),
            (
                "encrypted key with its password",
                ClientIdentity(
                    certificate: .file(fixtures.client.certificate), privateKey: .file(fixtures.clientKeyEncrypted),
                    password: fixtures.clientKeyPassword)
            ),
            (
                "encrypted key from PEM bytes with its password",
                ClientIdentity(
                    certificate: .pem(try contents(fixtures.client.certificate)),
                    privateKey: .pem(try contents(fixtures.clientKeyEncrypted)), password: fixtures.clientKeyPassword)
            ),
        ]
        try await withSharedTLSServer(Self.mutualTLS(fixtures, version)) { server in
            for (label, identity) in identities {
                try await withSession({
                    $0.tls.trustRoots = .file(fixtures.ca.certificate)
                    $0.tls.clientIdentity = identity
                }) { session in
                    let echo = try TLSEcho(try await session.execute(get(server.url())))
                    #expect(echo.clientCertificateCommonName == TLSFixtures.clientCommonName, "\(label)")
                    #expect(echo.tlsVersion == "TLSv\(version.rawValue)", "\(label)")
                }
            }
        }
    }

    /// curl's code for a private key OpenSSL will not use: CURLE_SSL_CERTPROBLEM before libcurl 8.16.0,
    /// CURLE_BAD_FUNCTION_ARGUMENT from it (both `.clientCertificateUnusable`).
    static let unusableKeyCode = CurlSession.libcurl.version < LibcurlVersion(8, 16, 0) ? 58 : 43

    @Test(arguments: [TLSServerOptions.TLSVersion.v1_3, .v1_2])
    func clientCertificateFailures(version: TLSServerOptions.TLSVersion) async throws {
        let fixtures = try await TLSFixtures.shared()
        let tls13 = version == .v1_3
        let untrusted = ClientIdentity(
            certificate: .file(fixtures.clientUntrusted.certificate), privateKey: .file(fixtures.clientUntrusted.key))
        let wrongPassword = ClientIdentity(
            certificate: .file(fixtures.client.certificate), privateKey: .file(fixtures.clientKeyEncrypted),
            password: "not-the-password")
        let mismatchedKey = ClientIdentity(
            certificate: .file(fixtures.client.certificate), privateKey: .file(fixtures.leaf.key))
        let cases: [(String, ClientIdentity?, Int, TLSFailureReason)] = [
            // The key cannot be loaded: curl fails before it connects, on either version.
            ("wrong password", wrongPassword, Self.unusableKeyCode, .clientCertificateUnusable),
            ("another certificate's key", mismatchedKey, Self.unusableKeyCode, .clientCertificateUnusable),
            // TLS 1.3: the client's handshake is complete before the server judges the certificate; the
            // refusal arrives as a read error. TLS 1.2: the server's alert ends the handshake; without
            // a certificate of our own, nothing says the alert was about one (handshakeFailed).
            ("no certificate", nil, tls13 ? 56 : 35, tls13 ? .clientCertificateRejected : .handshakeFailed),
            ("untrusted certificate", untrusted, tls13 ? 56 : 35, .clientCertificateRejected),
        ]
        try await withSharedTLSServer(Self.mutualTLS(fixtures, version)) { server in
            for (label, identity, curlCode, reason) in cases {
                try await withSession({
                    $0.tls.trustRoots = .file(fixtures.ca.certificate)
                    $0.tls.clientIdentity = identity
                }) { session in
                    #expect(await tlsFailure(session, get(server.url()), curlCode: curlCode) == reason, "\(label)")
                }
            }
            // The server itself is fine: the right identity gets through.
            try await withSession({
                $0.tls.trustRoots = .file(fixtures.ca.certificate)
                $0.tls.clientIdentity = Self.identity(fixtures)
            }) { session in
                let echo = try TLSEcho(try await session.execute(get(server.url())))
                #expect(echo.clientCertificateCommonName == TLSFixtures.clientCommonName)
            }
        }
    }

    @Test func aRequestsClientIdentityReplacesTheSessions() async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withSharedTLSServer(Self.mutualTLS(fixtures, .v1_3)) { server in
            // No identity in the session: refused without one, accepted with the request's own.
            try await withSession(trusting: .file(fixtures.ca.certificate)) { session in
                #expect(await tlsFailure(session, get(server.url("/none")), curlCode: 56) == .clientCertificateRejected)
                let response = try await session.execute(get(server.url("/own")) { $0.clientIdentity = Self.identity(fixtures) })
                let echo = try TLSEcho(response)
                #expect(echo.path == "/own")
                #expect(echo.clientCertificateCommonName == TLSFixtures.clientCommonName)
            }
            // An untrusted identity in the session: the request's own wins.
            try await withSession({
                $0.tls.trustRoots = .file(fixtures.ca.certificate)
                $0.tls.clientIdentity = ClientIdentity(
                    certificate: .file(fixtures.clientUntrusted.certificate), privateKey: .file(fixtures.clientUntrusted.key))
            }) { session in
                #expect(await tlsFailure(session, get(server.url("/session")), curlCode: 56) == .clientCertificateRejected)
                let response = try await session.execute(get(server.url("/own")) { $0.clientIdentity = Self.identity(fixtures) })
                #expect(try TLSEcho(response).clientCertificateCommonName == TLSFixtures.clientCommonName)
            }
        }
    }

    @Test(arguments: ["wrong password", "another certificate's key"])
    func aKeptConnectionIsNotReusedForAnIdentityWhoseKeyCannotBeUsed(variant: String) async throws {
        // The same certificate file with a key that cannot be used (alone, such an identity fails with
        // clientCertificateUnusable: see clientCertificateFailures). A connection made with the right
        // key is kept alive; the engine keeps identities apart in its pool, so the second request must
        // not go out over it.
        let fixtures = try await TLSFixtures.shared()
        let unusable =
            variant == "wrong password"
            ? ClientIdentity(
                certificate: .file(fixtures.client.certificate), privateKey: .file(fixtures.clientKeyEncrypted),
                password: "not-the-password")
            : ClientIdentity(certificate: .file(fixtures.client.certificate), privateKey: .file(fixtures.leaf.key))
        try await withSharedTLSServer(Self.mutualTLS(fixtures, .v1_3)) { server in
            try await withSession(trusting: .file(fixtures.ca.certificate)) { session in
                let first = try await session.execute(get(server.url("/first")) { $0.clientIdentity = Self.identity(fixtures) })
                #expect(try TLSEcho(first).clientCertificateCommonName == TLSFixtures.clientCommonName)
                // libcurl 7.88.1 matches connections (and TLS sessions) by the certificate, not the key or
                // its password; the engine spells a shared certificate differently for each identity, so
                // the second identity gets a connection of its own and fails to use its key.
                let error = await transportError {
                    try await session.execute(get(server.url("/second")) { $0.clientIdentity = unusable })
                }
                #expect(error?.code == .tlsFailure, "\(String(describing: error))")
                #expect(error?.curlCode == Self.unusableKeyCode, "\(String(describing: error))")
                #expect(error?.tlsReason == .clientCertificateUnusable, "\(String(describing: error))")
                // The first identity's connection is still there for it.
                let again = try await session.execute(get(server.url("/again")) { $0.clientIdentity = Self.identity(fixtures) })
                #expect(try TLSEcho(again).clientCertificateCommonName == TLSFixtures.clientCommonName)
                #expect(again.connectionReused)
            }
        }
    }

    // MARK: Minimum version

    @Test func minimumVersionRefusesAnOlderServer() async throws {
        let fixtures = try await TLSFixtures.shared()
        var options = TLSServerOptions(serving: fixtures.leaf)
        options.maximumTLSVersion = .v1_2
        try await withSharedTLSServer(options) { server in
            try await withSession({
                $0.tls.trustRoots = .file(fixtures.ca.certificate)
                $0.tls.minimumVersion = .tls1_2
            }) { session in
                let response = try await session.execute(get(server.url()))
                #expect(try TLSEcho(response).tlsVersion == "TLSv1.2")
            }
            try await withSession({
                $0.tls.trustRoots = .file(fixtures.ca.certificate)
                $0.tls.minimumVersion = .tls1_3
            }) { session in
                #expect(await tlsFailure(session, get(server.url()), curlCode: 35) == .handshakeFailed)
            }
        }
        // TLS 1.3 as the minimum still reaches a server that speaks it.
        try await withSharedTLSServer(TLSServerOptions(serving: fixtures.leaf)) { server in
            try await withSession({
                $0.tls.trustRoots = .file(fixtures.ca.certificate)
                $0.tls.minimumVersion = .tls1_3
            }) { session in
                let response = try await session.execute(get(server.url()))
                #expect(try TLSEcho(response).tlsVersion == "TLSv1.3")
            }
        }
    }

    // MARK: Session resumption

    @Test(arguments: [TLSServerOptions.TLSVersion.v1_3, .v1_2])
    func sessionsAreResumedOnNewConnections(version: TLSServerOptions.TLSVersion) async throws {
        let fixtures = try await TLSFixtures.shared()
        var options = TLSServerOptions(serving: fixtures.leafP384)
        options.maximumTLSVersion = version
        try await withSharedTLSServer(options) { server in
            try await withSession(trusting: .file(fixtures.caP384.certificate)) { session in
                // A session that resumes nothing, taking turns with the one that does.
                try await withSession({
                    $0.tls.trustRoots = .file(fixtures.caP384.certificate)
                    $0.tls.sessionResumption = false
                }) { fresh in
                    // `/close` ends each connection, so every request below opens a new one.
                    let first = try await session.execute(get(server.url("/close")))
                    let second = try await session.execute(get(server.url("/close")))
                    let (one, two) = (try TLSEcho(first), try TLSEcho(second))
                    #expect(one.tlsVersion == "TLSv\(version.rawValue)")
                    #expect(!one.sessionReused)
                    #expect(two.sessionReused)
                    #expect(two.connection != one.connection)
                    #expect(!second.connectionReused)

                    // The server's word on each handshake, not its duration: a full handshake is not
                    // reliably slower than a resumed one on a loaded machine.
                    for _ in 0..<6 {
                        let viaFresh = try await fresh.execute(get(server.url("/close")))
                        #expect(try TLSEcho(viaFresh).sessionReused == false)
                        #expect(!viaFresh.connectionReused)
                        let viaSession = try await session.execute(get(server.url("/close")))
                        #expect(try TLSEcho(viaSession).sessionReused)
                        #expect(!viaSession.connectionReused)
                    }
                }
            }
        }
    }

    @Test(arguments: [TLSServerOptions.TLSVersion.v1_3, .v1_2])
    func aHandleThatNeverConnectedResumesTheSessionsTLSSession(version: TLSServerOptions.TLSVersion) async throws {
        // The session's handles share one TLS session cache: a second easy handle, made while the first
        // is busy, resumes the session the first one negotiated.
        let fixtures = try await TLSFixtures.shared()
        var options = TLSServerOptions(serving: fixtures.leaf)
        options.maximumTLSVersion = version
        try await withSharedTLSServer(options) { server in
            try await withSession(trusting: .file(fixtures.ca.certificate)) { session in
                let first = try TLSEcho(try await session.execute(get(server.url("/close"))))
                #expect(!first.sessionReused)
                #expect(session.statistics.handlesCreated == 1)
                // The only handle is held by a request the server answers after 4 s (long enough that a
                // loaded machine still starts the next request while it is held: seen failing with 1 s)...
                async let held = session.execute(get(server.url("/hold?delay=4000")))
                #expect(await eventually { session.statistics.activeTransfers == 1 && session.statistics.pooledHandles == 0 })
                // ...and its connection's handshake (and TLS 1.3 tickets) are done well before the next
                // connection starts: libcurl 7.88 sometimes offers no session on a TLS 1.3 connection
                // whose handshake overlaps another one's to the same host (the curl tool does the same
                // with --parallel), which is not what this test is about.
                try await Task.sleep(for: .milliseconds(300))
                let other = try await session.execute(get(server.url("/close")))
                #expect(session.statistics.handlesCreated == 2)
                #expect(!other.connectionReused)
                let echo = try TLSEcho(other)
                #expect(echo.sessionReused)
                let heldResponse = try await held
                let heldEcho = try TLSEcho(heldResponse)
                #expect(!heldResponse.connectionReused)
                #expect(heldEcho.sessionReused)
                #expect(Set([first.connection, heldEcho.connection, echo.connection]).count == 3)
            }
        }
    }

    @Test(arguments: [TLSServerOptions.TLSVersion.v1_3, .v1_2])
    func noSessionIsResumedWhenResumptionIsOff(version: TLSServerOptions.TLSVersion) async throws {
        let fixtures = try await TLSFixtures.shared()
        var options = TLSServerOptions(serving: fixtures.leaf)
        options.maximumTLSVersion = version
        try await withSharedTLSServer(options) { server in
            try await withSession({
                $0.tls.trustRoots = .file(fixtures.ca.certificate)
                $0.tls.sessionResumption = false
            }) { session in
                var responses: [TransportResponse] = []
                for _ in 0..<3 { responses.append(try await session.execute(get(server.url("/close")))) }
                async let a = session.execute(get(server.url("/close?delay=300")))
                async let b = session.execute(get(server.url("/close?delay=300")))
                let (ra, rb) = try await (a, b)
                responses += [ra, rb]
                #expect(session.statistics.handlesCreated == 2)
                let echoes = try responses.map { try TLSEcho($0) }
                #expect(Set(echoes.map(\.connection)).count == 5)
                #expect(responses.map(\.connectionReused) == [false, false, false, false, false])
                #expect(echoes.map(\.sessionReused) == [false, false, false, false, false])
                #expect(echoes.allSatisfy { $0.tlsVersion == "TLSv\(version.rawValue)" })
            }
        }
    }

    // MARK: TLS identities in the pool

    @Test func connectionsOfDifferentIdentitiesAreKeptApart() async throws {
        let fixtures = try await TLSFixtures.shared()
        let fromFiles = Self.identity(fixtures)
        // The same certificate and key, from memory: a different identity to the pool and to libcurl.
        let fromMemory = ClientIdentity(
            certificate: .pem(try contents(fixtures.client.certificate)), privateKey: .pem(try contents(fixtures.client.key)))
        try await withSharedTLSServer(Self.mutualTLS(fixtures, .v1_3)) { server in
            try await withSession(trusting: .file(fixtures.ca.certificate)) { session in
                let a1 = try await session.execute(get(server.url("/a1")) { $0.clientIdentity = fromFiles })
                let b1 = try await session.execute(get(server.url("/b1")) { $0.clientIdentity = fromMemory })
                let a2 = try await session.execute(get(server.url("/a2")) { $0.clientIdentity = fromFiles })
                let b2 = try await session.execute(get(server.url("/b2")) { $0.clientIdentity = fromMemory })
                let echoes = try [a1, b1, a2, b2].map { try TLSEcho($0) }
                #expect(echoes.allSatisfy { $0.clientCertificateCommonName == TLSFixtures.clientCommonName })
                // Each identity keeps its own connection; the same identity shares it.
                let ids = echoes.map(\.connection)
                #expect(ids[0] != ids[1], "\(ids)")
                #expect(ids[2] == ids[0], "\(ids)")
                #expect(ids[3] == ids[1], "\(ids)")
                #expect(echoes.map(\.request) == [1, 1, 2, 2])
                #expect([a1, b1, a2, b2].map(\.connectionReused) == [false, false, true, true])

                let entries = await session.hostStatistics().filter { $0.host.hasPrefix("https://127.0.0.1:\(server.port)") }
                #expect(entries.count == 2, "\(entries)")
                #expect(entries.map(\.openConnections) == [1, 1])
                #expect(entries.allSatisfy { $0.host.hasSuffix("(own TLS identity)") })
            }
        }
    }

    // MARK: Redirects

    @Test func httpsToHTTPRedirectIsRefusedUnlessAllowed() async throws {
        let fixtures = try await TLSFixtures.shared()
        let plain = try await LocalHTTPServer.start { request in .text("plain \(request.path)") }
        do {
            var options = TLSServerOptions(serving: fixtures.leaf)
            options.redirects = ["/from": plain.url("/to")]
            try await withTLSTestServer(options) { server in
                try await withSession(trusting: .file(fixtures.ca.certificate)) { session in
                    var request = TransportRequest(url: server.url("/from"), headerFields: [.authorization: "Bearer secret"])

                    let error = await transportError { try await session.execute(request) }
                    #expect(error?.code == .redirectRefused)
                    #expect(error?.location == plain.url("/to"))
                    #expect(error?.url == server.url("/from"))
                    #expect(plain.statistics.requestsReceived == 0)

                    request.redirectPolicy = .follow(allowsHTTPSToHTTP: true)
                    let response = try await session.execute(request)
                    #expect(response.status.code == 200)
                    #expect(response.body.text == "plain /to")
                    #expect(response.effectiveURL == plain.url("/to"))
                    #expect(response.redirects == [RedirectStep(url: server.url("/from"), status: .found)])
                    #expect(plain.requests.count == 1)
                    #expect(plain.requests.first?.header("Authorization") == nil)

                    // The http server does record the field when it is sent to it directly.
                    var direct = TransportRequest(url: plain.url("/direct"), headerFields: [.authorization: "Bearer secret"])
                    direct.redirectPolicy = .doNotFollow
                    _ = try await session.execute(direct)
                    #expect(plain.requests.last?.header("Authorization") == "Bearer secret")
                }
            }
            try await plain.shutdown()
        } catch {
            try await plain.shutdown()
            throw error
        }
    }
}

/// An https request's handle is kept with the session's TLS options for the next plain https request; a
/// request with its own pins is given them, and the plain request after it goes without them.
@Suite struct TLSHandleReuseTests {
    @Test func aRequestsPinsApplyAndDoNotStayForTheNextRequest() async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withSharedTLSServer(TLSServerOptions(serving: fixtures.leaf)) { server in
            try await withSession(trusting: .file(fixtures.ca.certificate)) { session in
                let first = try TLSEcho(try await session.execute(get(server.url("/plain-1"))))
                #expect(first.path == "/plain-1")
                let reason = await tlsFailure(
                    session, get(server.url("/wrong-pins")) { $0.pinnedPublicKeys = [fixtures.pins.ca] }, curlCode: 90)
                #expect(reason == .pinMismatch)
                let again = try TLSEcho(try await session.execute(get(server.url("/plain-2"))))
                #expect(again.path == "/plain-2")
                #expect(again.connection == first.connection)
                let pinned = try TLSEcho(
                    try await session.execute(get(server.url("/right-pins")) { $0.pinnedPublicKeys = [fixtures.pins.leaf] }))
                #expect(pinned.path == "/right-pins")
                let last = try TLSEcho(try await session.execute(get(server.url("/plain-3"))))
                #expect(last.path == "/plain-3")
            }
        }
    }
}
