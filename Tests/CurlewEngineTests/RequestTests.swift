// Curlew — methods, header fields and bodies reach the server exactly as given.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

@Suite struct RequestTests {
    static let echo: @Sendable (ServerRequest) async -> ServerReply = { request in
        .respond(
            status: 200, headers: [("X-Method", request.method), ("X-Body-Length", "\(request.body.count)")],
            body: request.body)
    }

    @Test(arguments: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
    func methodWithBodyAndHeadersRoundTrips(method: String) async throws {
        try await withServerAndSession(handler: Self.echo) { server, session in
            let body = Data("payload for \(method) ✓".utf8)
            let request = try TransportRequest(
                url: server.url("/echo?x=1"), method: HTTPRequest.Method(method)!,
                headers: [("X-Custom", "value 1"), ("Content-Type", "text/plain")], body: .data(body))
            let response = try await session.execute(request)
            #expect(response.status.code == 200)
            #expect(response.body == body)
            #expect(response.headerFields[HTTPField.Name("X-Method")!] == method)
            let received = try #require(server.requests.last)
            #expect(received.method == method)
            #expect(received.uri == "/echo?x=1")
            #expect(received.header("X-Custom") == "value 1")
            #expect(received.header("Content-Type") == "text/plain")
            #expect(received.header("Content-Length") == "\(body.count)")
            #expect(received.body == Array(body))
            #expect(received.header("Expect") == nil)
        }
    }

    @Test func headRequestHasNoBody() async throws {
        try await withServerAndSession(handler: { _ in .text("twelve bytes") }) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/"), method: .head))
            #expect(response.status.code == 200)
            #expect(response.body.isEmpty)
            #expect(response.headerFields[.contentLength] == "12")
            #expect(server.requests.last?.method == "HEAD")
        }
    }

    @Test func postWithoutBodySendsZeroLengthAndNoFormContentType() async throws {
        try await withServerAndSession(handler: Self.echo) { server, session in
            _ = try await session.execute(TransportRequest(url: server.url("/"), method: .post))
            let received = try #require(server.requests.last)
            #expect(received.header("Content-Length") == "0")
            #expect(received.header("Content-Type") == nil)
        }
    }

    @Test func bodyWithoutContentTypeGetsNone() async throws {
        try await withServerAndSession(handler: Self.echo) { server, session in
            _ = try await session.execute(
                TransportRequest(url: server.url("/"), method: .post, body: .string("a=b")))
            let received = try #require(server.requests.last)
            #expect(received.header("Content-Type") == nil)
            #expect(received.body == Array("a=b".utf8))
        }
    }

    @Test func largeBodyIsSentWithoutExpectContinue() async throws {
        try await withServerAndSession(handler: Self.echo) { server, session in
            let body = Data((0..<(2 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let response = try await session.execute(
                TransportRequest(url: server.url("/big"), method: .put, body: .data(body)))
            #expect(response.body == body)
            let received = try #require(server.requests.last)
            #expect(received.header("Expect") == nil)
            #expect(received.body.count == body.count)
        }
    }

    @Test func expectContinueIsSentWhenConfigured() async throws {
        var configuration = SessionConfiguration()
        configuration.expectContinueThreshold = 1024
        try await withServerAndSession(configuration: configuration, handler: Self.echo) { server, session in
            let body = Data(repeating: 7, count: 4096)
            let response = try await session.execute(
                TransportRequest(url: server.url("/"), method: .post, body: .data(body)))
            #expect(response.body == body)
            #expect(server.requests.last?.header("Expect") == "100-continue")
        }
    }

    @Test func emptyHeaderValueIsSentEmpty() async throws {
        try await withServerAndSession(handler: Self.echo) { server, session in
            _ = try await session.execute(try TransportRequest(url: server.url("/"), headers: [("X-Empty", "")]))
            let received = try #require(server.requests.last)
            #expect(received.headers(named: "X-Empty") == [""])
        }
    }

    @Test func defaultsAreSent() async throws {
        try await withServerAndSession(handler: Self.echo) { server, session in
            _ = try await session.execute(TransportRequest(url: server.url("/")))
            let received = try #require(server.requests.last)
            #expect(received.header("User-Agent") == "Curlew/0.1")
            let encodings = Set(
                (received.header("Accept-Encoding") ?? "").split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                })
            // The codings the engine decodes itself, whatever else the loaded libcurl could decode.
            #expect(received.header("Accept-Encoding") == "deflate, gzip")
            #expect(encodings == ["gzip", "deflate"])
        }
    }

    @Test func aRequestsOwnUserAgentAndAcceptEncodingReplaceTheDefaults() async throws {
        try await withServerAndSession(handler: Self.echo) { server, session in
            let request = try TransportRequest(
                url: server.url("/"), headers: [("User-Agent", "mine/2"), ("Accept-Encoding", "identity"), ("X-A", "1")])
            _ = try await session.execute(request)
            let received = try #require(server.requests.last)
            #expect(received.headers(named: "User-Agent") == ["mine/2"])
            #expect(received.headers(named: "Accept-Encoding") == ["identity"])
            #expect(received.header("X-A") == "1")
        }
    }

    @Test func anEmptyUserAgentSendsNone() async throws {
        var configuration = SessionConfiguration()
        configuration.userAgent = ""
        configuration.automaticDecompression = false
        try await withServerAndSession(configuration: configuration, handler: Self.echo) { server, session in
            _ = try await session.execute(TransportRequest(url: server.url("/")))
            let received = try #require(server.requests.last)
            #expect(received.headers(named: "User-Agent") == [])
            #expect(received.headers(named: "Accept-Encoding") == [])
        }
    }

    @Test func requestTimeoutOverridesSessionTimeout() async throws {
        try await withServerAndSession(handler: { _ in .hang }) { server, session in
            let error = await transportError {
                try await session.execute(TransportRequest(url: server.url("/"), timeout: .milliseconds(200)))
            }
            #expect(error?.code == .timedOut)
            #expect(error?.timeout == .total)
        }
    }

    @Test func proxyIsUsedOnlyWhenConfigured() async throws {
        // The test server plays the proxy: it receives the absolute-form request target.
        let proxy = try await LocalHTTPServer.start(handler: { request in .text("via proxy \(request.uri)") })
        var configuration = SessionConfiguration()
        configuration.proxy = .url(proxy.baseURL)
        let session = try CurlSession(configuration: configuration)
        let response = try await session.execute(TransportRequest(url: "http://origin.invalid/path?q=1"))
        #expect(response.body.text == "via proxy http://origin.invalid/path?q=1")
        await session.shutdown()
        try await proxy.shutdown()
    }
}
