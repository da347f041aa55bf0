// Curlew — response heads are classified strictly, and every timeout reports which one it was.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// The time limit turns a timeout that never fires into a failure instead of a hang.
@Suite(.timeLimit(.minutes(2))) struct TimeoutAndHeadTests {
    // MARK: Heads

    /// An interim head: the status line alone, or padded with one field to about 1 KiB.
    static func interimHead(padding: Int) -> [UInt8] {
        let field = padding > 0 ? "X-Pad: \(String(repeating: "p", count: padding))\r\n" : ""
        return Array("HTTP/1.1 100 Continue\r\n\(field)\r\n".utf8)
    }

    @Test(arguments: [
        // (the setting, or nil for the default of 256 KiB; padding of each interim head)
        (8 * 1024, 0),
        (nil, 1000),
        (300 * 1024, 1000),  // libcurl's own cap on all heads, the same size as the engine's
        (1024 * 1024, 1000),  // acts as 300 KiB
    ] as [(Int?, Int)])
    func endlessInterimHeadsAreHeadersTooLarge(limit: Int?, padding: Int) async throws {
        var configuration = SessionConfiguration()
        if let limit { configuration.maxResponseHeaderSize = limit }
        let head = Self.interimHead(padding: padding)
        #expect(head.count < 1100)  // each head is far under any limit
        let handler: @Sendable (ServerRequest) async -> ServerReply = { _ in
            .drip(head: head, chunk: head, interval: .milliseconds(1), count: 1_000_000, after: .close)
        }
        try await withServerAndSession(configuration: configuration, handler: handler) { server, session in
            let error = await transportError {
                try await session.execute(TransportRequest(url: server.url("/"), timeout: .seconds(20)))
            }
            // Not connectionReset, which libcurl's own cap on all heads used to be reported as.
            #expect(error?.code == .headersTooLarge, "\(String(describing: error))")
            // The engine gave up the connection, which ends the server's drip.
            #expect(await eventually { server.statistics.connectionsOpen == 0 })
        }
    }

    @Test(arguments: [nil, 300 * 1024] as [Int?])
    func aHeaderLineOverLibcurlsLineCapIsHeadersTooLarge(limit: Int?) async throws {
        var configuration = SessionConfiguration()
        if let limit { configuration.maxResponseHeaderSize = limit }
        #expect(configuration.maxResponseHeaderSize >= 256 * 1024)  // the line alone is within the setting
        let line = "X-Big: " + String(repeating: "b", count: 150 * 1024)
        let reply = Array("HTTP/1.1 200 OK\r\n\(line)\r\nContent-Length: 2\r\n\r\nok".utf8)
        try await withServerAndSession(configuration: configuration, handler: { _ in .raw(reply, after: .keepOpen) }) {
            server, session in
            let error = await transportError {
                try await session.execute(TransportRequest(url: server.url("/"), timeout: .seconds(10)))
            }
            #expect(error?.code == .headersTooLarge, "\(String(describing: error))")
        }
    }

    @Test(arguments: ["Http/1.1 200 OK", "HTTP/1.1 20 OK", "HTTP/1.1 2000 OK"])
    func malformedStatusLinesAreInvalidResponses(statusLine: String) async throws {
        let reply = Array("\(statusLine)\r\nContent-Length: 2\r\n\r\nok".utf8)
        // Kept open: the engine must refuse the head, not stumble on the end of the connection.
        try await withServerAndSession(handler: { _ in .raw(reply, after: .keepOpen) }) { server, session in
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            #expect(error?.code == .invalidResponse, "\(String(describing: error))")
        }
    }

    @Test(arguments: [
        ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, "ok", ResponseHead.HTTPVersion.http1_1),
        ("HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", 200, "ok", .http1_1),
        ("HTTP/1.0 204 No Content\r\n\r\n", 204, "", .http1_0),
    ])
    func wellFormedStatusLinesAreAccepted(reply: String, status: Int, body: String, version: ResponseHead.HTTPVersion) async throws {
        // Kept open: each reply is complete by its framing (Content-Length; a 204 has no body).
        try await withServerAndSession(handler: { _ in .raw(Array(reply.utf8), after: .keepOpen) }) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/")))
            #expect(response.status.code == status)
            #expect(response.body.text == body)
            #expect(response.httpVersion == version)
        }
    }

    // MARK: Timeouts

    @Test func theLowSpeedCheckFiresNoEarlierThanItsTime() async throws {
        var configuration = SessionConfiguration()
        configuration.lowSpeedLimit = 1000
        configuration.lowSpeedTime = .milliseconds(2500)
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n".utf8)
        let handler: @Sendable (ServerRequest) async -> ServerReply = { _ in
            .drip(head: head, chunk: [0x41], interval: .milliseconds(200), count: 1000, after: .close)
        }
        try await withServerAndSession(configuration: configuration, handler: handler) { server, session in
            let started = ContinuousClock.now
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            let elapsed = ContinuousClock.now - started
            #expect(error?.code == .timedOut)
            #expect(error?.timeout == .lowSpeed)
            // A lower bound only: a loaded machine can only lengthen the interval.
            #expect(elapsed >= .milliseconds(2500), "failed after \(elapsed)")
        }
    }

    static func idleConfiguration() -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.idleTimeout = .milliseconds(700)
        return configuration
    }

    @Test func aServerThatStallsMidBodyHitsTheIdleTimeout() async throws {
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n".utf8)
        let half = head + [UInt8](repeating: 0x68, count: 1_000_000)
        try await withServerAndSession(configuration: Self.idleConfiguration(), handler: { _ in .raw(half, after: .keepOpen) }) {
            server, session in
            let started = ContinuousClock.now
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            let elapsed = ContinuousClock.now - started
            #expect(error?.code == .timedOut)
            #expect(error?.timeout == .idle, "\(String(describing: error))")
            #expect(error?.message == "no byte was sent or received for 0.7 seconds")
            // Never before its time (a loaded machine can only lengthen the interval).
            #expect(elapsed >= .milliseconds(700), "failed after \(elapsed)")
            // The aborted transfer's connection is closed, not kept for reuse.
            #expect(await eventually { server.statistics.connectionsOpen == 0 })
        }
    }

    @Test func aSlowButSteadyServerIsNotIdle() async throws {
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n".utf8)
        let handler: @Sendable (ServerRequest) async -> ServerReply = { _ in
            .drip(head: head, chunk: [0x73], interval: .milliseconds(200), count: 40, after: .keepOpen)
        }
        // 200 ms between bytes against a 6 s idle timeout, over 8 s in all. The margin is wide: with
        // every suite running at once, a 2-core machine has held the loopback server back for more
        // than 3 s (its handler starts on the task pool, which CPU-bound suites keep busy).
        var configuration = SessionConfiguration()
        configuration.idleTimeout = .seconds(6)
        try await withServerAndSession(configuration: configuration, handler: handler) { server, session in
            let started = ContinuousClock.now
            let response = try await session.execute(TransportRequest(url: server.url("/")))
            let elapsed = ContinuousClock.now - started
            #expect(response.status.code == 200)
            #expect(response.body.text == String(repeating: "s", count: 40))
            // The transfer outlived the idle timeout: each byte restarted it. (A lower bound the
            // server's pacing guarantees; a loaded machine can only lengthen the interval.)
            #expect(elapsed >= .milliseconds(7800), "completed after \(elapsed)")
        }
    }

    @Test func waitingForTheFirstByteCountsAsIdle() async throws {
        // The server holds the request until the client has given up, so no byte can arrive first.
        let gate = Gate()
        defer { gate.open() }
        let answered = Locked(false)
        let handler: @Sendable (ServerRequest) async -> ServerReply = { _ in
            await gate.wait()
            answered.withLock { $0 = true }
            return .text("late")
        }
        try await withServerAndSession(configuration: Self.idleConfiguration(), handler: handler) { server, session in
            let started = ContinuousClock.now
            let error = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            let elapsed = ContinuousClock.now - started
            #expect(error?.code == .timedOut)
            #expect(error?.timeout == .idle, "\(String(describing: error))")
            // Never before its time (a loaded machine can only lengthen the interval).
            #expect(elapsed >= .milliseconds(700), "failed after \(elapsed)")
            #expect(server.statistics.requestsReceived == 1)
            #expect(!answered.withLock { $0 })
            // Let the server answer the aborted request before it stops.
            gate.open()
            #expect(await eventually { answered.withLock { $0 } })
        }
    }

    @Test func aConnectTimeoutStillReportsConnect() async throws {
        // A listener that never accepts, its backlog full: the kernel drops further SYNs.
        let listener = try FullBacklogListener()
        defer { listener.close() }
        var configuration = Self.idleConfiguration()
        configuration.connectTimeout = .milliseconds(300)
        let session = try CurlSession(configuration: configuration)
        let started = ContinuousClock.now
        let error = await transportError {
            try await session.execute(TransportRequest(url: "http://127.0.0.1:\(listener.port)/"))
        }
        let elapsed = ContinuousClock.now - started
        #expect(error?.code == .timedOut)
        #expect(error?.timeout == .connect, "\(String(describing: error))")
        #expect(error?.curlCode == 28)
        // Never before its time (a loaded machine can only lengthen the interval).
        #expect(elapsed >= .milliseconds(300), "failed after \(elapsed)")
        await session.shutdown()
    }

    @Test func connectingIsGovernedByTheConnectTimeoutNotTheIdleTimeout() async throws {
        // An idle timeout shorter than the connect timeout: a hung connect still fails as a connect
        // timeout, after the connect timeout.
        let listener = try FullBacklogListener()
        defer { listener.close() }
        var configuration = SessionConfiguration()
        configuration.idleTimeout = .milliseconds(300)
        configuration.connectTimeout = .milliseconds(1200)
        let session = try CurlSession(configuration: configuration)
        let started = ContinuousClock.now
        let error = await transportError {
            try await session.execute(TransportRequest(url: "http://127.0.0.1:\(listener.port)/"))
        }
        let elapsed = ContinuousClock.now - started
        #expect(error?.code == .timedOut)
        #expect(error?.timeout == .connect, "\(String(describing: error))")
        // After the connect timeout, not the shorter idle one (a loaded machine can only lengthen it).
        #expect(elapsed >= .milliseconds(1200), "failed after \(elapsed)")
        await session.shutdown()
    }
}
