// Curlew — every way an exchange can fail ends in a typed error, never a crash or a silent success.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

@Suite struct FailureTests {
    @Test func connectionRefused() async throws {
        let session = try CurlSession()
        let error = await withRefusingPort { port in
            await transportError { try await session.execute(TransportRequest(url: "http://127.0.0.1:\(port)/")) }
        }
        #expect(error?.code == .cannotConnect)
        #expect(error?.curlCode == 7)
        #expect(error?.message.isEmpty == false)
        await session.shutdown()
    }

    @Test func dnsFailure() async throws {
        let session = try CurlSession()
        let error = await transportError {
            try await session.execute(TransportRequest(url: "http://no-such-host.invalid/"))
        }
        #expect(error?.code == .dnsFailure)
        #expect(error?.curlCode == 6)
        #expect(error?.url == "http://no-such-host.invalid/")
        await session.shutdown()
    }

    @Test func connectTimeout() async throws {
        // A listener that never accepts, its backlog already full: the kernel drops further SYNs.
        let listener = try FullBacklogListener()
        defer { listener.close() }
        var configuration = SessionConfiguration()
        configuration.connectTimeout = .milliseconds(300)
        let session = try CurlSession(configuration: configuration)
        let error = await transportError {
            try await session.execute(TransportRequest(url: "http://127.0.0.1:\(listener.port)/"))
        }
        #expect(error?.code == .timedOut)
        #expect(error?.timeout == .connect, "\(String(describing: error))")
        await session.shutdown()
    }

    @Test func totalTimeout() async throws {
        var configuration = SessionConfiguration()
        configuration.totalTimeout = .milliseconds(300)
        try await withServerAndSession(configuration: configuration, handler: { _ in .hang }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .timedOut)
            #expect(error?.timeout == .total)
            // The engine keeps the total timeout itself (queue time included), not curl.
            #expect(error?.curlCode == nil)
            #expect(error?.message == "the total timeout of 0.3 seconds expired")
        }
    }

    @Test func lowSpeedTimeout() async throws {
        var configuration = SessionConfiguration()
        configuration.lowSpeedLimit = 1000
        configuration.lowSpeedTime = .seconds(1)
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n".utf8)
        let handler: @Sendable (ServerRequest) async -> ServerReply = { _ in
            .drip(head: head, chunk: [0x41], interval: .milliseconds(400), count: 100, after: .close)
        }
        try await withServerAndSession(configuration: configuration, handler: handler) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .timedOut)
            #expect(error?.timeout == .lowSpeed)
        }
    }

    @Test func serverClosesMidBody() async throws {
        let raw = Array("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789".utf8)
        try await withServerAndSession(handler: { _ in .raw(raw, after: .close) }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .connectionClosed)
            #expect(error?.curlCode == 18)
            // The reservation followed Content-Length, capped at the body limit and 1 MiB.
            #expect(session.statistics.largestTransferBuffer == 1000)
        }
    }

    @Test func chunkedBodyCutShort() async throws {
        let raw = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n5\r\nwo".utf8)
        try await withServerAndSession(handler: { _ in .raw(raw, after: .close) }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .connectionClosed)
        }
    }

    @Test func serverResetsMidBody() async throws {
        let raw = Array("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n".utf8) + [UInt8](repeating: 0x61, count: 5000)
        try await withServerAndSession(handler: { _ in .raw(raw, after: .reset) }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .connectionReset || error?.code == .connectionClosed)
        }
    }

    @Test func serverClosesWithoutResponse() async throws {
        try await withServerAndSession(handler: { _ in .raw([], after: .close) }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .connectionClosed)
            #expect(error?.curlCode == 52)
        }
    }

    @Test(arguments: [
        ("no status line (HTTP/0.9)", "hello there\r\n\r\n"),
        ("a status line that is not one", "HTTP/1.1 abc\r\nContent-Length: 0\r\n\r\n"),
        ("chunk sizes that are not hex", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"),
    ])
    func malformedResponsesAreInvalidResponses(what: String, reply: String) async throws {
        try await withServerAndSession(handler: { _ in .raw(Array(reply.utf8), after: .close) }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .invalidResponse, "\(what): \(String(describing: error))")
        }
    }

    @Test func aBodyThatIsNotTheGzipItClaimsIsABadContentEncoding() async throws {
        let reply = Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\nnot gzip!!".utf8)
        try await withServerAndSession(handler: { _ in .raw(reply, after: .close) }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .badContentEncoding)
        }
    }

    @Test func lyingContentLengthReservesAtMostOneMebibyte() async throws {
        let raw = Array("HTTP/1.1 200 OK\r\nContent-Length: 50000000\r\n\r\n0123456789".utf8)
        try await withServerAndSession(handler: { _ in .raw(raw, after: .close) }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .connectionClosed)
            #expect(session.statistics.largestTransferBuffer == 1 << 20)
            #expect(session.statistics.bufferedBytes == 0)
        }
    }

    @Test func encodedBodyDoesNotReserveFromContentLength() async throws {
        let compressed = Compression.gzip(Array(repeating: 0x62, count: 100))
        let head = Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 900000\r\n\r\n".utf8)
        // The server announces far more than it sends, then closes.
        let handler: @Sendable (ServerRequest) async -> ServerReply = { _ in .raw(head + compressed, after: .close) }
        try await withServerAndSession(handler: handler) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .connectionClosed)
            // Grown from what arrived (4 KiB minimum), not reserved from the announced 900,000 bytes.
            #expect(session.statistics.largestTransferBuffer <= 4096)
        }
    }

    @Test func twoDifferentContentLengthsAreRejected() async throws {
        let raw = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello".utf8)
        try await withServerAndSession(handler: { _ in .raw(raw, after: .keepOpen) }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .invalidResponse)
            #expect(error?.message.contains("Content-Length") == true)
        }
    }

    @Test func headTooLarge() async throws {
        var configuration = SessionConfiguration()
        configuration.maxResponseHeaderSize = 8 * 1024
        let headers = (0..<20).map { ("X-Filler-\($0)", String(repeating: "v", count: 1000)) }
        let handler: @Sendable (ServerRequest) async -> ServerReply = { _ in .respond(status: 200, headers: headers) }
        try await withServerAndSession(configuration: configuration, handler: handler) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .headersTooLarge)
        }
    }

    @Test func tlsFailureCarriesCurlsMessage() async throws {
        // A plain-HTTP server cannot complete a TLS handshake.
        try await withServerAndSession(handler: { _ in .text("not tls") }) { server, session in
            let error = await transportError {
                try await session.execute(TransportRequest(url: "https://127.0.0.1:\(server.port)/"))
            }
            #expect(error?.code == .tlsFailure)
            #expect(error?.curlCode == 35)
            #expect(error?.message.isEmpty == false)
        }
    }

    @Test(arguments: [
        "HTTP/1.1 abc OK\r\n\r\n",
        "garbage\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n",
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\nnot gzip!!",
        "HTTP/1.1 999 Whatever\r\nContent-Length: 0\r\n\r\n",
    ])
    func malformedResponsesFailWithoutCrashing(raw: String) async throws {
        try await withServerAndSession(handler: { _ in .raw(Array(raw.utf8), after: .close) }) { server, session in
            do {
                let response = try await session.execute(TransportRequest(url: server.url("/")))
                // The only one libcurl accepts is a three-digit status it does not know.
                #expect(response.status.code == 999)
            } catch let error as TransportError {
                #expect(error.code != .curl || error.curlCode != nil)
            }
            // The session is still healthy.
            #expect(session.statistics.activeTransfers == 0)
        }
    }
}
