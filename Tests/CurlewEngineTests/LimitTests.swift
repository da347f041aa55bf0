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

/// Content codings stacked in layers: libcurl 7.88 and later refuse more than its cap itself
/// (CURLE_BAD_CONTENT_ENCODING); before, it decoded every layer, and the engine refuses the response before
/// its body (``CurlQuirks/contentCodingChainUnbounded``). A few layers decode on every version.
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

    @Test(arguments: [1, 5, 10])
    func tenLayersAreRefusedOverOneLineOrMany(lines: Int) async throws {
        let (body, headers) = Self.stacked("hello", layers: 10, lines: lines)
        let configuration = SessionConfiguration()
        // From 7.84 libcurl refuses a line of more than 4 codings itself; from 7.88, more than 5 in all.
        let libcurlCapsTheLine = CurlSession.libcurl.version >= LibcurlVersion(7, 84, 0) && lines == 1
        try await withServerAndSession(configuration: configuration, handler: { _ in
            .respond(status: 200, headers: headers, body: body)
        }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .badContentEncoding, "\(String(describing: error))")
            if configuration.quirks.contentCodingChainUnbounded, !libcurlCapsTheLine {
                #expect(error?.message == "the response stacks 10 content codings; at most 5 are decoded")
                #expect(error?.curlCode == nil)
            } else {
                #expect(error?.curlCode == 61)  // CURLE_BAD_CONTENT_ENCODING
            }
        }
    }

    /// The engine's check, forced with a cap below libcurl's own so that it is reached on any version: 3
    /// layers over 2 lines, at most 2.
    @Test func theEnginesCheckRefusesBeforeTheBody() async throws {
        let (body, headers) = Self.stacked("hello", layers: 3, lines: 2)
        var configuration = SessionConfiguration()
        configuration.quirks.contentCodingChainUnbounded = true
        configuration.quirks.maximumContentCodings = 2
        try await withServerAndSession(configuration: configuration, handler: { _ in
            .respond(status: 200, headers: headers, body: body)
        }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .badContentEncoding)
            #expect(error?.message == "the response stacks 3 content codings; at most 2 are decoded")
            #expect(error?.curlCode == nil)
            // Without automatic decompression libcurl decodes nothing, and the bytes come as sent.
            var raw = configuration
            raw.automaticDecompression = false
            let plain = try CurlSession(configuration: raw)
            let response = try await plain.execute(TransportRequest(url: server.url("/")))
            await plain.shutdown()
            #expect(Array(response.body) == body)
        }
    }

    @Test func threeLayersDecode() async throws {
        let (body, headers) = Self.stacked("three layers", layers: 3, lines: 2)
        try await withServerAndSession(handler: { _ in .respond(status: 200, headers: headers, body: body) }) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/")))
            #expect(response.body.text == "three layers")
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
