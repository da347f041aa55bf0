// Curlew — bad input is refused before anything is sent.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

@Suite struct InputValidationTests {
    @Test(arguments: [
        ("X-Evil", "a\r\nInjected: yes"),
        ("X-Evil", "line\nfeed"),
        ("X-Evil", "carriage\rreturn"),
        ("X-Evil", "nul\u{0}byte"),
        ("Bad Name", "value"),
        ("Bad:Name", "value"),
        ("", "value"),
    ])
    func headerInjectionIsRefused(name: String, value: String) async throws {
        #expect(throws: TransportError.self) {
            _ = try TransportRequest(url: "http://127.0.0.1/", headers: [(name, value)])
        }
        do {
            _ = try TransportRequest(url: "http://127.0.0.1/", headers: [(name, value)])
        } catch {
            #expect(error.code == .invalidHeader)
        }
    }

    @Test func nothingIsSentForARefusedRequest() async throws {
        try await withServerAndSession(handler: { _ in .text("x") }) { server, session in
            var fields = HTTPFields()
            // Build a field that bypasses the string checks, as a caller of HTTPFields could.
            fields.append(HTTPField(name: HTTPField.Name("X-Ok")!, value: "fine"))
            let ok = TransportRequest(url: server.url("/"), headerFields: fields)
            #expect(throws: TransportError.self) {
                _ = try TransportRequest(url: server.url("/"), headers: [("X-Evil", "a\r\nb: c")])
            }
            let invalid = await transportError { try await session.execute(TransportRequest(url: "ftp://127.0.0.1:\(server.port)/")) }
            #expect(invalid?.code == .invalidURL)
            #expect(server.statistics.requestsReceived == 0)
            #expect(server.statistics.connectionsAccepted == 0)
            _ = try await session.execute(ok)
            #expect(server.statistics.requestsReceived == 1)
        }
    }

    @Test(arguments: [
        "ftp://example.com/file",
        "file:///etc/passwd",
        "gopher://example.com/",
        "example.com/path",
        "/relative/path",
        "http://exa mple.com/",
        "http://[::1/",
        "",
        "https//missing-colon.example",
    ])
    func invalidURLsAreRefused(url: String) async throws {
        let session = try CurlSession()
        let error = await transportError { try await session.execute(TransportRequest(url: url)) }
        #expect(error?.code == .invalidURL)
        #expect(session.statistics.completedTransfers + session.statistics.failedTransfers == 0)
        await session.shutdown()
    }

    @Test func schemeIsCaseInsensitive() async throws {
        try await withServerAndSession(handler: { _ in .text("x") }) { server, session in
            let response = try await session.execute(TransportRequest(url: "HTTP://127.0.0.1:\(server.port)/"))
            #expect(response.status.code == 200)
        }
    }
}

@Suite struct SessionConfigurationValidationTests {
    @Test func aUserAgentThatWouldSplitTheHeadIsRefused() {
        var configuration = SessionConfiguration()
        configuration.userAgent = "agent\r\nX-Injected: yes"
        do {
            _ = try CurlSession(configuration: configuration)
            Issue.record("expected the session to refuse the user agent")
        } catch {
            #expect(error.code == .invalidHeader)
        }
    }
}
