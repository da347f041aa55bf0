// Curlew — response-size limits hold for announced, chunked and compressed bodies.

@testable import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

@Suite struct LimitTests {
    static func configuration(limit: Int) -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.maxResponseBodySize = limit
        return configuration
    }

    @Test func bodyAtTheLimitIsAccepted() async throws {
        let body = [UInt8](repeating: 0x7A, count: 64 * 1024)
        try await withServerAndSession(configuration: Self.configuration(limit: 64 * 1024), handler: { _ in
            .respond(status: 200, body: body)
        }) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/")))
            #expect(response.body.count == 64 * 1024)
        }
    }

    @Test func announcedBodyOverTheLimitIsRefusedBeforeDownloading() async throws {
        let body = [UInt8](repeating: 0x7A, count: 64 * 1024 + 1)
        try await withServerAndSession(configuration: Self.configuration(limit: 64 * 1024), handler: { _ in
            .respond(status: 200, body: body)
        }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .bodyTooLarge)
            #expect(session.statistics.largestTransferBuffer == 0)
        }
    }

    @Test func chunkedBodyOverTheLimit() async throws {
        let chunk = [UInt8](repeating: 0x63, count: 16 * 1024)
        try await withServerAndSession(configuration: Self.configuration(limit: 100 * 1024), handler: { _ in
            .chunked(status: 200, chunks: Array(repeating: chunk, count: 20))
        }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .bodyTooLarge)
            #expect(session.statistics.largestTransferBuffer <= 2 * 100 * 1024)
        }
    }

    @Test func gzipBombIsStoppedOnDecodedBytes() async throws {
        // 200 MiB of zeros compress to about 200 KiB; the limit is 1 MiB of decoded bytes.
        let bomb = Compression.gzipZeros(count: 200 * 1024 * 1024)
        #expect(bomb.count < 1024 * 1024)
        try await withServerAndSession(configuration: Self.configuration(limit: 1024 * 1024), handler: { _ in
            .respond(status: 200, headers: [("Content-Encoding", "gzip")], body: bomb)
        }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .bodyTooLarge)
            #expect(session.statistics.largestTransferBuffer <= 2 * 1024 * 1024)
            #expect(session.statistics.bufferedBytes == 0)
        }
    }
}

/// Content codings stacked in layers: the engine decodes one gzip or deflate layer, so a stack is
/// refused before any of its body is decoded (libcurl, which decoded up to 5 and before 7.88 any number,
/// no longer decodes bodies), and without automatic decompression the bytes come as sent.
@Suite struct StackedCodingTests {
    /// `layers` gzip layers over `text`, announced over `lines` `Content-Encoding` fields (as evenly as
    /// they go), and the response.
    static func stacked(_ text: String, layers: Int, lines: Int) -> (body: [UInt8], headers: [(String, String)]) {
        var body = Array(text.utf8)
        for _ in 0..<layers { body = Compression.gzip(body) }
        let perLine = (layers + lines - 1) / lines
        var headers: [(String, String)] = []
        var left = layers
        while left > 0 {
            let count = min(perLine, left)
            headers.append(("Content-Encoding", Array(repeating: "gzip", count: count).joined(separator: ", ")))
            left -= count
        }
        return (body, headers)
    }

    @Test(arguments: [(2, 1), (3, 2), (10, 1), (10, 10)])
    func stackedLayersAreRefused(layers: Int, lines: Int) async throws {
        let (body, headers) = Self.stacked("hello", layers: layers, lines: lines)
        try await withServerAndSession(handler: { _ in .respond(status: 200, headers: headers, body: body) }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .badContentEncoding, "\(String(describing: error))")
            let codings = Array(repeating: "gzip", count: layers).joined(separator: ", ")
            #expect(error?.message == "the response is encoded with \(codings), which is not decoded")
            #expect(error?.curlCode == nil)
            // Without automatic decompression nothing is decoded, and the bytes come as sent.
            var raw = SessionConfiguration()
            raw.automaticDecompression = false
            let plain = try CurlSession(configuration: raw)
            let response = try await plain.execute(TransportRequest(url: server.url("/")))
            await plain.shutdown()
            #expect(Array(response.body) == body)
        }
    }

    @Test func oneLayerDecodes() async throws {
        let (body, headers) = Self.stacked("one layer", layers: 1, lines: 1)
        try await withServerAndSession(handler: { _ in .respond(status: 200, headers: headers, body: body) }) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/")))
            #expect(response.body.text == "one layer")
        }
    }
}

@Suite struct BufferGrowthTests {
    @Test func announcedBodyGrowsToItsLengthAfterTheFirstMebibyte() async throws {
        let body = [UInt8](repeating: 0x41, count: 3 * 1024 * 1024)
        try await withServerAndSession(handler: { _ in .respond(status: 200, body: body) }) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/")))
            #expect(response.body.count == body.count)
            #expect(session.statistics.largestTransferBuffer == 3 * 1024 * 1024)
        }
    }

    @Test func chunkedBodyOfUnknownLengthIsComplete() async throws {
        let chunk = [UInt8](repeating: 0x42, count: 100_000)
        try await withServerAndSession(handler: { _ in .chunked(status: 200, chunks: Array(repeating: chunk, count: 30)) }) {
            server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/")))
            #expect(response.body.count == 3_000_000)
            #expect(response.body.allSatisfy { $0 == 0x42 })
        }
    }
}
