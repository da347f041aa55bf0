// Curlew — response-size limits hold for announced, chunked and compressed bodies.

import CurlewEngine
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
