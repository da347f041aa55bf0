// Curlew — backpressure on streamed responses, measured at the server: bytes the client holds =
// bytes the server's kernel accepted − the server socket's unsent queue − the client socket's receive
// queue, while the consumer reads nothing. It stays within the documented bound for each protocol and
// coding.

@testable import CurlewEngine
import CurlewTestSupport
import Foundation
import HTTPTypes
import Testing

/// Waits until the server's writer for `tag` has been blocked (its socket full because the client
/// stopped reading), then returns what the client holds and the figures it came from.
private func held(at server: StreamTestServer, tag: String) async throws -> (held: Int, written: Int, outq: Int, inq: Int) {
    var stats = try await server.stats { $0.tags[tag]?.blocked == true }
    guard var entry = stats.tags[tag], entry.blocked else {
        throw TestInfrastructureError(description: "the server never blocked writing \(tag): \(String(describing: stats.tags[tag]))")
    }
    // Blocked means nothing moves any more; read again until two readings agree, to be sure.
    while true {
        try await Task.sleep(for: .milliseconds(50))
        stats = try await server.stats()
        guard let next = stats.tags[tag] else { break }
        if next.written == entry.written, next.outq == entry.outq { break }
        entry = next
    }
    guard let inq = receiveQueue(ofLocalPort: entry.peerPort, remotePort: server.port) else {
        throw TestInfrastructureError(description: "no client socket on port \(entry.peerPort)")
    }
    return (entry.written - entry.outq - inq, entry.written, entry.outq, inq)
}

/// The bound over HTTP/1.1: the receive buffer (libcurl keeps at most one read when a write pauses)
/// plus the engine's stream buffer.
private let http1Bound = SessionConfiguration().receiveBufferSize + SessionConfiguration().streamBufferSize

@Suite(.serialized) struct StreamBackpressureTests {
    /// Identity with a length, gzip and deflate of bytes that do not compress (chunked), and a gzip bomb
    /// (2 GiB of zeros in about 2 MiB; libcurl's own decoder would turn one 64 KiB read into 66 MiB).
    /// Run as the loaded libcurl needs, and with the paused socket's reads held (the fallback for libcurl
    /// 8.5.0, which would read it into its 64 MiB pause buffer) forced, which holds on every version.
    @Test(arguments: [
        "/bytes?n=268435456&length=1", "/bytes?n=268435456&encoding=gzip&random=1",
        "/bytes?n=268435456&encoding=deflate&random=1", "/bomb?n=2147483648&encoding=gzip",
    ], [false, true])
    func http1HoldsAtMostTheReceiveBufferPlusTheStreamBuffer(path: String, readsHeldForced: Bool) async throws {
        // A small server send buffer makes the server block soon, whatever the kernel would tune it to.
        var options = StreamServerOptions()
        options.sendBuffer = 65536
        try await withStreamServer(options) { server in
            var configuration = SessionConfiguration()
            if readsHeldForced { configuration.quirks.pausedTransferSocketStaysReadable = true }
            let session = try CurlSession(configuration: configuration)
            try await ensuring({
                let tag = UUID().uuidString
                let figures = try await session.perform(TransportRequest(url: server.url("\(path)&tag=\(tag)"))) { head, _ in
                    #expect(head.status == .ok)
                    return try await held(at: server, tag: tag)
                }
                print("HTTP/1.1 \(path): held \(figures.held) (written \(figures.written), server queue \(figures.outq), client queue \(figures.inq)); bound \(http1Bound)")
                #expect(figures.held <= http1Bound)
                #expect(figures.held > 0)
            }, cleanUp: { await session.shutdown() })
        }
    }

    /// A stream alone on its HTTP/2 connection (prior knowledge over cleartext, where libcurl 7.88 gives
    /// every request a connection of its own): libcurl stops reading the socket while the only stream
    /// is paused, so the bound is HTTP/1.1's plus libcurl's HTTP/2 input buffering.
    @Test(arguments: ["/bytes?n=268435456", "/bytes?n=268435456&encoding=gzip&random=1"])
    func http2AloneOnItsConnectionHoldsLittleMore(path: String) async throws {
        var options = StreamServerOptions()
        options.sendBuffer = 65536
        try await withStreamServer(options) { server in
            var configuration = SessionConfiguration()
            configuration.httpVersion = .http2PriorKnowledge
            let session = try CurlSession(configuration: configuration)
            try await ensuring({
                let tag = UUID().uuidString
                let figures = try await session.perform(TransportRequest(url: server.url("\(path)&tag=\(tag)"))) { head, _ in
                    #expect(head.httpVersion == .http2)
                    return try await held(at: server, tag: tag)
                }
                print("HTTP/2 alone \(path): held \(figures.held) (written \(figures.written), server queue \(figures.outq), client queue \(figures.inq))")
                #expect(figures.held <= http2AloneBound)
                #expect(figures.held > 0)
            }, cleanUp: { await session.shutdown() })
        }
    }
}

extension StreamBackpressureTests {
    /// Two streams to one HTTP/2 host: the one not read pauses, the other still completes, in the order of
    /// events; a stall fails only at the second request's 20 s timeout.
    ///
    /// From libcurl 7.88 both share one connection: libcurl keeps reading it for the sibling, and the
    /// paused stream's data waits in libcurl's pause buffer, up to the stream's window. Before 7.88 a
    /// paused stream would stall its connection, so the streamed response goes over HTTP/1.1 on a
    /// connection of its own (``CurlQuirks/pausedHTTP2StreamStallsConnection``); that fallback is also run
    /// forced, which holds on every version.
    @Test(arguments: [false, true])
    func aPausedHTTP2StreamDoesNotStallItsSibling(ownConnectionForced: Bool) async throws {
        let fixtures = try await TLSFixtures.shared()
        var options = StreamServerOptions(identity: fixtures.leaf)
        options.sendBuffer = 65536
        try await withStreamServer(options) { server in
            var configuration = SessionConfiguration()
            configuration.tls.trustRoots = .file(fixtures.ca.certificate)
            if ownConnectionForced { configuration.quirks.pausedHTTP2StreamStallsConnection = true }
            let ownConnection = configuration.quirks.streamedResponsesAvoidHTTP2
            let session = try CurlSession(configuration: configuration)
            try await ensuring({
                let tag = UUID().uuidString
                let figures = try await session.perform(TransportRequest(url: server.url("/bytes?n=268435456&random=1&tag=\(tag)"))) {
                    head, _ in
                    #expect(head.httpVersion == (ownConnection ? .http1_1 : .http2))
                    // The paused stream alone: libcurl stops reading and the server blocks.
                    _ = try await held(at: server, tag: tag)
                    var sibling = TransportRequest(url: server.url("/request"), timeout: .seconds(20))
                    sibling.headerFields[.accept] = "application/json"
                    let response = try await session.execute(sibling)
                    let received = try ReceivedRequest(response.body)
                    #expect(response.status == .ok)
                    #expect(response.httpVersion == .http2)
                    #expect(received.protocol == "h2")
                    let streamConnection = (try await server.stats()).tags[tag]?.connection
                    if ownConnection {
                        #expect(!response.connectionReused)
                        #expect(received.connection != streamConnection)
                    } else {
                        #expect(response.connectionReused)
                        #expect(received.connection == streamConnection)
                    }
                    return try await held(at: server, tag: tag)
                }
                // The sibling's few hundred bytes count here too; TLS and HTTP/2 framing add under 1%.
                print("HTTP/2 beside a sibling (own connection: \(ownConnection)): held \(figures.held) (written \(figures.written), server queue \(figures.outq), client queue \(figures.inq))")
                #expect(figures.held <= (ownConnection ? http1Bound + tlsRecord : http2SharedBound))
                #expect(session.statistics.peakOpenConnections == (ownConnection ? 2 : 1))
            }, cleanUp: { await session.shutdown() })
        }
    }
}

/// A TLS record OpenSSL may hold beyond what libcurl has read (16 KiB of data and its framing).
private let tlsRecord = 17 * 1024

/// The largest stream window libcurl gives an HTTP/2 stream (32 MiB up to 8.0; 512 KiB in 8.1 to 8.4,
/// 10 MiB from 8.5), which a server may fill while the stream is paused when its connection is read for
/// other streams, plus the HTTP/1.1 bound and 1% for framing.
private let http2SharedBound = (32 << 20) * 101 / 100 + http1Bound

/// The bound for an HTTP/2 stream alone on its connection: HTTP/1.1's plus 64 KiB of frames libcurl
/// reads ahead.
private let http2AloneBound = http1Bound + 64 * 1024
