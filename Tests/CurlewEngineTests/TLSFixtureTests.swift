// Curlew — the TLS test infrastructure works: certificates made at test time, real TLS servers on
// loopback, and the engine talking to them.
//
// Until the engine has CA, client-certificate and pinning options these tests run with `verifyTLS`
// off; Tests/Servers/check_fixtures.sh proves each certificate with the `curl` command instead.

import CurlewEngine
import CurlewTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite struct TLSFixtureTests {
    /// Runs `body` with a server for `options` and a session that does not verify certificates.
    func withServer<T>(
        _ options: TLSServerOptions, _ body: (TLSTestServer, CurlSession) async throws -> T
    ) async throws -> T {
        var configuration = SessionConfiguration()
        configuration.verifyTLS = false
        let session = try CurlSession(configuration: configuration)
        do {
            let result = try await withTLSTestServer(options) { try await body($0, session) }
            await session.shutdown()
            return result
        } catch {
            await session.shutdown()
            throw error
        }
    }

    @Test func fixturesAreMadeOncePerProcess() async throws {
        let fixtures = try await TLSFixtures.shared()
        let again = try await TLSFixtures.shared()
        #expect(fixtures.directory == again.directory)
        #expect(fixtures.pins == again.pins)
        let files = [
            fixtures.ca.certificate, fixtures.ca.key, fixtures.leaf.certificate, fixtures.leaf.key, fixtures.leaf.chain,
            fixtures.intermediate.certificate, fixtures.leafViaIntermediate.chain, fixtures.selfSigned.certificate,
            fixtures.expired.certificate, fixtures.notYetValid.certificate, fixtures.wrongHost.certificate,
            fixtures.client.certificate, fixtures.client.key, fixtures.clientKeyEncrypted,
            fixtures.otherCA.certificate, fixtures.clientUntrusted.certificate,
            "\(fixtures.caHashedDirectory)/\(fixtures.caSubjectHash).0",
        ]
        for file in files {
            #expect(FileManager.default.fileExists(atPath: file), "\(file)")
        }
        // The chain a server sends for the intermediate's leaf holds two certificates.
        let chain = try String(contentsOfFile: fixtures.leafViaIntermediate.chain, encoding: .utf8)
        #expect(chain.components(separatedBy: "-----BEGIN CERTIFICATE-----").count == 3)
        #expect(fixtures.leaf.chain != fixtures.leaf.certificate)
        #expect(
            try String(contentsOfFile: fixtures.leaf.chain, encoding: .utf8)
                == String(contentsOfFile: fixtures.leaf.certificate, encoding: .utf8))
        let key = try String(contentsOfFile: fixtures.clientKeyEncrypted, encoding: .utf8)
        #expect(key.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        #expect(!fixtures.clientKeyPassword.isEmpty)
        let pins = [fixtures.pins.leaf, fixtures.pins.intermediate, fixtures.pins.ca]
        #expect(Set(pins).count == 3)
        for pin in pins {
            #expect(pin.hasPrefix("sha256//"))
            #expect(Data(base64Encoded: String(pin.dropFirst(8)))?.count == 32)
        }
    }

    @Test func tls13ByDefault() async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withServer(TLSServerOptions(serving: fixtures.leaf)) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/hello?x=1")))
            #expect(response.status.code == 200)
            #expect(response.httpVersion == .http1_1)
            let echo = try TLSEcho(response)
            #expect(echo.method == "GET")
            #expect(echo.path == "/hello?x=1")
            #expect(echo.tlsVersion == "TLSv1.3")
            #expect(echo.serverName == nil)  // no SNI for an IP address
            #expect(echo.sessionReused == false)
            #expect(echo.clientCertificateCommonName == nil)
            #expect(echo.connection == 1)
            #expect(echo.connections == 1)
        }
    }

    @Test func tlsMax12GivesTLS12() async throws {
        let fixtures = try await TLSFixtures.shared()
        var options = TLSServerOptions(serving: fixtures.leaf)
        options.maximumTLSVersion = .v1_2
        try await withServer(options) { server, session in
            let response = try await session.execute(
                TransportRequest(url: server.url("/upload"), method: .post, body: .string("12345")))
            #expect(response.status.code == 200)
            let echo = try TLSEcho(response)
            #expect(echo.tlsVersion == "TLSv1.2")
            #expect(echo.method == "POST")
            #expect(echo.bodyLength == 5)
        }
    }

    @Test func requestsOnOneSessionShareOneConnection() async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withServer(TLSServerOptions(serving: fixtures.leaf)) { server, session in
            let first = try await session.execute(TransportRequest(url: server.url("/one")))
            let second = try await session.execute(TransportRequest(url: server.url("/two")))
            let (one, two) = (try TLSEcho(first), try TLSEcho(second))
            #expect(one.connection == 1 && one.request == 1)
            #expect(two.connection == 1 && two.request == 2)
            #expect(two.connections == 1)
            #expect(!first.connectionReused)
            #expect(second.connectionReused)
        }
    }

    @Test func localhostURLSendsTheServerName() async throws {
        let fixtures = try await TLSFixtures.shared()
        var options = TLSServerOptions(serving: fixtures.leafViaIntermediate)
        options.alpn = ["http/1.1"]
        try await withServer(options) { server, session in
            let url = server.url("/named", host: .localhost)
            #expect(url == "https://localhost:\(server.port)/named")
            let echo = try TLSEcho(try await session.execute(TransportRequest(url: url)))
            #expect(echo.serverName == "localhost")
            #expect(echo.alpn == "http/1.1")
        }
    }

    @Test(arguments: [TLSServerOptions.TLSVersion.v1_3, .v1_2])
    func closedConnectionIsReopenedAndTheSessionResumed(version: TLSServerOptions.TLSVersion) async throws {
        // `/close` answers with `Connection: close`; the next request needs a new connection, and
        // libcurl offers the session it cached from the first (the server sends close_notify, without
        // which OpenSSL would refuse to resume a TLS 1.2 session).
        let fixtures = try await TLSFixtures.shared()
        var options = TLSServerOptions(serving: fixtures.leaf)
        options.maximumTLSVersion = version
        try await withServer(options) { server, session in
            let first = try TLSEcho(try await session.execute(TransportRequest(url: server.url("/close"))))
            let second = try TLSEcho(try await session.execute(TransportRequest(url: server.url("/after"))))
            #expect(first.tlsVersion == "TLSv\(version.rawValue)")
            #expect(first.connection == 1 && !first.sessionReused)
            #expect(second.connection == 2 && second.connections == 2)
            #expect(second.sessionReused)
        }
    }

    @Test func serverWithoutResumptionStartsFreshSessions() async throws {
        let fixtures = try await TLSFixtures.shared()
        var options = TLSServerOptions(serving: fixtures.leaf)
        options.resumption = false
        try await withServer(options) { server, session in
            _ = try await session.execute(TransportRequest(url: server.url("/close")))
            let second = try TLSEcho(try await session.execute(TransportRequest(url: server.url("/after"))))
            #expect(second.connection == 2)
            #expect(!second.sessionReused)
        }
    }

    @Test func clientCertificateIsOptionalUnlessRequired() async throws {
        // The engine has no client-certificate option yet: an optional request is answered, and the
        // server reports no certificate.
        let fixtures = try await TLSFixtures.shared()
        var options = TLSServerOptions(serving: fixtures.leaf)
        options.clientCA = fixtures.ca.certificate
        try await withServer(options) { server, session in
            let echo = try TLSEcho(try await session.execute(TransportRequest(url: server.url("/"))))
            #expect(echo.clientCertificateCommonName == nil)
        }
    }

    @Test func verificationRejectsTheTestCertificates() async throws {
        // The test CA is in no system trust store: with verification on, the engine refuses the server.
        let fixtures = try await TLSFixtures.shared()
        try await withTLSTestServer(TLSServerOptions(serving: fixtures.leaf)) { server in
            let session = try CurlSession()
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            await session.shutdown()
            #expect(error?.code == .tlsFailure)
            #expect(error?.curlCode == 60)
        }
    }

    @Test func stopEndsTheServer() async throws {
        let fixtures = try await TLSFixtures.shared()
        let server = try await TLSTestServer.start(TLSServerOptions(serving: fixtures.leaf))
        #expect(server.isRunning)
        await server.stop()
        #expect(!server.isRunning)
        await server.stop()  // stopping twice is harmless
    }

    @Test func serverExitsWhenItsStandardInputCloses() async throws {
        // Another server started later must not keep the first one's stdin open (inherited descriptors).
        let fixtures = try await TLSFixtures.shared()
        let first = try await TLSTestServer.start(TLSServerOptions(serving: fixtures.leaf))
        let second = try await TLSTestServer.start(TLSServerOptions(serving: fixtures.leaf))
        first.closeStandardInput()
        #expect(await first.waitForExit(timeout: .seconds(20)))
        #expect(second.isRunning)
        await second.stop()
        await first.stop()
    }

    @Test func startFailureReportsTheServersError() async throws {
        let fixtures = try await TLSFixtures.shared()
        do {
            let server = try await TLSTestServer.start(
                TLSServerOptions(certificate: fixtures.directory + "/missing.pem", key: fixtures.leaf.key))
            await server.stop()
            Issue.record("expected the server to fail to start")
        } catch let error as TestInfrastructureError {
            #expect(error.description.contains("exited before printing its port"))
            #expect(error.description.contains("tls_server: cannot start"))
        }
    }
}
