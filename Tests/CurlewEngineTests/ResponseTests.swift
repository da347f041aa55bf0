// Curlew — what a response carries: head, body, metadata, decompression.

@testable import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

@Suite struct ResponseTests {
    @Test func repeatedHeaderFieldsAreKeptAndNamesCaseInsensitive() async throws {
        let handler: @Sendable (ServerRequest) async -> ServerReply = { _ in
            .respond(
                status: 201,
                headers: [("Set-Cookie", "a=1"), ("set-cookie", "b=2"), ("X-Thing", "one"), ("Content-Type", "text/plain")],
                body: Array("created".utf8))
        }
        try await withServerAndSession(handler: handler) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/things")))
            #expect(response.status.code == 201)
            #expect(response.headerFields[values: .setCookie] == ["a=1", "b=2"])
            #expect(response.headerFields[HTTPField.Name("x-thing")!] == "one")
            #expect(response.headerFields[HTTPField.Name("X-THING")!] == "one")
            #expect(response.body.text == "created")
        }
    }

    @Test func metadataIsReportedOnEveryResponse() async throws {
        try await withServerAndSession(handler: { _ in .json("{\"ok\":true}") }) { server, session in
            let first = try await session.execute(TransportRequest(url: server.url("/a?b=c")))
            let second = try await session.execute(TransportRequest(url: server.url("/a?b=c")))
            #expect(first.effectiveURL == server.url("/a?b=c"))
            #expect(first.httpVersion == .http1_1)
            #expect(first.connectionReused == false)
            #expect(second.connectionReused == true)
            #expect(first.timings.total > .zero)
            #expect(first.timings.connect > .zero)
            // curl's phase times all count from the transfer's start, so they are ordered whatever the load.
            #expect(first.timings.firstByte <= first.timings.total)
            #expect(first.timings.connect <= first.timings.firstByte)
            #expect(first.timings.tlsHandshake == .zero)
            #expect(second.timings.total > .zero)
            // A reused connection had no lookup or connect of its own, on every libcurl (before 7.87 curl
            // reports the time it took to find the connection as its connect).
            #expect(second.timings.nameLookup == .zero)
            #expect(second.timings.connect == .zero)
            #expect(second.timings.tlsHandshake == .zero)
            #expect(server.statistics.connectionsAccepted == 1)
        }
    }

    /// A response without a body has its first byte's time too, on every libcurl: where libcurl stamps it
    /// with the first body byte (``CurlQuirks/firstByteWaitsForTheBody``, 8.6) the engine takes the first
    /// header line's arrival; that fallback is also run forced, which holds on every version.
    @Test(arguments: [204, 302], [false, true])
    func aResponseWithoutABodyHasItsFirstByteTime(status: Int, fallbackForced: Bool) async throws {
        var configuration = SessionConfiguration()
        if fallbackForced { configuration.quirks.firstByteWaitsForTheBody = true }
        let handler: @Sendable (ServerRequest) async -> ServerReply = { _ in
            .respond(status: status, headers: [("Location", "/elsewhere")], body: [])
        }
        try await withServerAndSession(configuration: configuration, handler: handler) { server, session in
            var request = TransportRequest(url: server.url("/none"))
            request.redirectPolicy = .doNotFollow
            let response = try await session.execute(request)
            #expect(response.status.code == status)
            #expect(response.body.isEmpty)
            #expect(response.timings.firstByte > .zero)
            #expect(response.timings.firstByte <= response.timings.total)
        }
    }

    @Test(arguments: ["gzip", "deflate"])
    func compressedBodiesAreDecoded(encoding: String) async throws {
        let original = Array(String(repeating: "{\"name\":\"curlew\",\"fast\":true}", count: 200).utf8)
        let compressed = encoding == "gzip" ? Compression.gzip(original) : Compression.deflate(original)
        let handler: @Sendable (ServerRequest) async -> ServerReply = { _ in
            .respond(status: 200, headers: [("Content-Encoding", encoding)], body: compressed)
        }
        try await withServerAndSession(handler: handler) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/")))
            #expect(compressed.count < original.count)
            #expect(Array(response.body) == original)
            #expect(response.headerFields[.contentEncoding] == encoding)
        }
    }

    @Test func decompressionCanBeTurnedOff() async throws {
        var configuration = SessionConfiguration()
        configuration.automaticDecompression = false
        let compressed = Compression.gzip(Array("hello".utf8))
        let handler: @Sendable (ServerRequest) async -> ServerReply = { request in
            .respond(
                status: 200, headers: [("Content-Encoding", "gzip"), ("X-AE", request.header("Accept-Encoding") ?? "none")],
                body: compressed)
        }
        try await withServerAndSession(configuration: configuration, handler: handler) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/")))
            #expect(Array(response.body) == compressed)
            #expect(response.headerFields[HTTPField.Name("X-AE")!] == "none")
        }
    }

    @Test func chunkedBodyIsAssembled() async throws {
        let handler: @Sendable (ServerRequest) async -> ServerReply = { _ in
            .chunked(status: 200, chunks: [Array("hello ".utf8), Array("chunked ".utf8), Array("world".utf8)])
        }
        try await withServerAndSession(handler: handler) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/")))
            #expect(response.body.text == "hello chunked world")
        }
    }

    @Test func interimResponsesAreSkipped() async throws {
        let raw = Array("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nX-Final: yes\r\nContent-Length: 2\r\n\r\nok".utf8)
        try await withServerAndSession(handler: { _ in .raw(raw, after: .keepOpen) }) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/")))
            #expect(response.status.code == 200)
            #expect(response.headerFields[HTTPField.Name("X-Final")!] == "yes")
            #expect(response.body.text == "ok")
        }
    }

    @Test func handlesAndConnectionsAreReused() async throws {
        try await withServerAndSession(handler: { _ in .text("x") }) { server, session in
            for _ in 0..<20 { _ = try await session.execute(TransportRequest(url: server.url("/"))) }
            let statistics = session.statistics
            #expect(statistics.handlesCreated == 1)
            #expect(statistics.pooledHandles == 1)
            #expect(statistics.connectionsOpened == 1)
            #expect(statistics.completedTransfers == 20)
            #expect(statistics.activeTransfers == 0)
            #expect(statistics.bufferedBytes == 0)
            #expect(server.statistics.connectionsAccepted == 1)
        }
    }

    @Test func connectionsPerHostAreLimited() async throws {
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 2
        let handler: @Sendable (ServerRequest) async -> ServerReply = { _ in .delayed(.milliseconds(50), .text("x")) }
        try await withServerAndSession(configuration: configuration, handler: handler) { server, session in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<10 {
                    group.addTask { try await session.execute(TransportRequest(url: server.url("/"))).status.code }
                }
                for try await code in group { #expect(code == 200) }
            }
            #expect(server.statistics.connectionsAccepted == 2)
            #expect(session.statistics.connectionsOpened == 2)
        }
    }
}
