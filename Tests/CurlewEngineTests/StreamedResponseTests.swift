// Curlew — streamed responses against real servers over HTTP/1.1 and HTTP/2: holding is not idleness, a
// silent server is, leaving early or failing frees everything, limits, decoding, redirects, timeouts.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// Waits until the server's writer for `tag` is blocked: the client holds what it can and reads no more.
private func waitUntilBlocked(_ server: StreamTestServer, tag: String) async throws {
    let stats = try await server.stats { $0.tags[tag]?.blocked == true }
    guard stats.tags[tag]?.blocked == true else {
        throw TestInfrastructureError(description: "the server never blocked writing \(tag)")
    }
}

/// A server send buffer small enough that the server blocks soon after the client stops reading.
private var smallSendBuffer: StreamServerOptions {
    var options = StreamServerOptions()
    options.sendBuffer = 65536
    return options
}

private struct HandlerFailure: Error, Equatable {}

@Suite struct StreamedResponseTests {
    /// The consumer holds the stream for twice the idle timeout after the server has blocked: no
    /// timeout, and every byte arrives afterwards.
    @Test(arguments: Wire.allCases)
    func holdingTheStreamIsNotIdleness(wire: Wire) async throws {
        try await withStreamServerAndSession(wire, options: smallSendBuffer, configure: { $0.idleTimeout = .seconds(1) }) {
            server, session in
            let tag = UUID().uuidString
            let total = 8 << 20
            let count = try await session.perform(TransportRequest(url: server.url("/bytes?n=\(total)&length=1&tag=\(tag)"))) {
                _, body in
                try await waitUntilBlocked(server, tag: tag)
                try await Task.sleep(for: .seconds(2))
                var count = 0
                for try await chunk in body { count += chunk.count }
                return count
            }
            #expect(count == total)
        }
    }

    /// A server that sends part of the body and then nothing trips the idle timeout while the consumer
    /// waits for more. 3 s: a loaded machine once took over 1 s to get the head to the session, and the
    /// idle timeout fired before the head.
    @Test(arguments: Wire.allCases)
    func aSilentServerTripsTheIdleTimeout(wire: Wire) async throws {
        try await withStreamServerAndSession(wire, configure: { $0.idleTimeout = .seconds(3) }) { server, session in
            let (received, error) = try await session.perform(TransportRequest(url: server.url("/stall-body?n=1000"))) { _, body in
                var received = 0
                do throws(TransportError) {
                    for try await chunk in body { received += chunk.count }
                    return (received, nil as TransportError?)
                } catch {
                    return (received, error)
                }
            }
            #expect(received == 1000)
            #expect(error?.code == .timedOut)
            #expect(error?.timeout == .idle)
        }
    }

    /// The total timeout ends with the head: a body that takes longer than it still arrives whole; a
    /// buffered request with the same timeout fails.
    @Test(arguments: Wire.allCases)
    func theTotalTimeoutRunsUntilTheHead(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            // The head comes at once, the body over 8 s: longer than the 7 s timeout, which only a machine
            // that takes 7 s to answer would reach before the head (the sanitizer run has taken 3 s).
            let request = TransportRequest(url: server.url("/drip?n=17&interval=500&size=10"), timeout: .seconds(7))
            let text = try await session.perform(request) { _, body in
                String(decoding: try await body.collect(upTo: 1000), as: UTF8.self)
            }
            #expect(text == String(repeating: "A", count: 170))
            let error = await transportError { try await session.execute(request) }
            #expect(error?.code == .timedOut)
            #expect(error?.timeout == .total)
        }
    }

    /// `timeoutCoversBody` bounds the whole streamed exchange: the body trickling past the timeout fails
    /// the read with a total timeout (before, a body trickling for 8 s under a 7 s timeout ended
    /// cleanly, as it still does without the option).
    @Test(arguments: Wire.allCases)
    func timeoutCoversBodyBoundsTheWholeStreamedExchange(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            // The head at once, then 10 bytes every 500 ms for 8 s; a 3 s timeout over all of it.
            var request = TransportRequest(url: server.url("/drip?n=17&interval=500&size=10"), timeout: .seconds(3))
            request.options.timeoutCoversBody = true
            var received = 0
            let error = await transportError {
                try await session.perform(request) { head, body in
                    #expect(head.status.code == 200)
                    for try await chunk in body { received += chunk.count }
                }
            }
            #expect(error?.code == .timedOut, "\(String(describing: error))")
            #expect(error?.timeout == .total)
            #expect(received < 170)
            // The session goes on.
            let next = try await session.execute(TransportRequest(url: server.url("/request")))
            #expect(next.status.code == 200)
        }
    }

    /// Leaving a paused transfer, throwing, and cancelling before the head and mid-body each abort their transfer:
    /// afterwards no transfer runs, no descriptor is left open, and the next request gets a sound
    /// connection.
    @Test(arguments: Wire.allCases)
    func leavingEarlyThrowingOrCancellingLeaksNothing(wire: Wire) async throws {
        // A server of its own: its connections are this test's only, whatever runs beside it.
        try await withStreamServerAndSession(wire, ownServer: true) { server, session in
            // Warm up: the TLS fixtures, the pool and the first connection exist before counting.
            _ = try await session.execute(TransportRequest(url: server.url("/request")))
            let connections = connectionCount(toPort: server.port)
            #expect(connections == 1)

            // A paused transfer whose reader leaves: one chunk read, then the handler returns once the
            // server is blocked on the full connection (the engine has paused the transfer).
            let pausedTag = UUID().uuidString
            let first = try await session.perform(TransportRequest(url: server.url("/bytes?n=67108864&tag=\(pausedTag)"))) { _, body in
                var iterator = body.makeAsyncIterator()
                let count = try await iterator.next()?.count
                try await waitUntilBlocked(server, tag: pausedTag)
                return count
            }
            #expect(first != nil)

            await #expect(throws: HandlerFailure()) {
                try await session.perform(TransportRequest(url: server.url("/bytes?n=67108864"))) { _, body in
                    for try await _ in body { throw HandlerFailure() }
                }
            }

            let tag = UUID().uuidString
            let beforeHead = Task {
                try await session.perform(TransportRequest(url: server.url("/stall?tag=\(tag)"))) { _, _ in }
            }
            _ = try await server.stats { $0.tags[tag] != nil }
            beforeHead.cancel()
            let cancelled = await #expect(throws: TransportError.self) { try await beforeHead.value }
            #expect(cancelled?.code == .cancelled)

            let (started, start) = AsyncStream<Void>.makeStream()
            let midBody = Task {
                try await session.perform(TransportRequest(url: server.url("/stall-body?n=100"))) { _, body in
                    for try await _ in body { start.yield() }
                }
            }
            for await _ in started { break }
            midBody.cancel()
            let interrupted = await #expect(throws: TransportError.self) { try await midBody.value }
            #expect(interrupted?.code == .cancelled)

            #expect(await eventually { session.statistics.activeTransfers == 0 })
            #expect(session.statistics.cancelledTransfers == 4)
            let after = try await session.execute(TransportRequest(url: server.url("/request")))
            #expect(after.status == .ok)
            #expect(try ReceivedRequest(after.body).path == "/request")
            // The aborted transfers' connections are closed; the kept one is the next request's.
            #expect(await eventually { connectionCount(toPort: server.port) <= connections })
        }
    }

    @Test(arguments: Wire.allCases, ["gzip", "deflate"])
    func compressedBodiesAreDecodedAsTheyAreRead(wire: Wire, encoding: String) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let (bytes, contentEncoding, expected) = try await session.perform(
                TransportRequest(url: server.url("/bytes?n=1000000&encoding=\(encoding)"))
            ) { head, body in
                (Array(try await body.collect(upTo: 2_000_000)), head.headerFields[.contentEncoding], body.expectedLength)
            }
            #expect(contentEncoding == encoding)
            #expect(expected == nil)
            #expect(bytes == streamPattern(count: 1_000_000))
        }
    }

    /// A bomb decoded with a body limit fails when the decoded bytes pass it, holding one chunk at a time.
    @Test(arguments: Wire.allCases)
    func aBombStopsAtTheRequestsBodyLimit(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            var request = TransportRequest(url: server.url("/bomb?n=1073741824&encoding=gzip"))
            request.options.maxResponseBodySize = 8 << 20
            let (decoded, error) = try await session.perform(request) { _, body in
                var decoded = 0
                do throws(TransportError) {
                    for try await chunk in body {
                        #expect(chunk.count <= 64 * 1024)
                        decoded += chunk.count
                    }
                    return (decoded, nil as TransportError?)
                } catch {
                    return (decoded, error)
                }
            }
            #expect(error?.code == .bodyTooLarge)
            #expect(error?.message == "the decoded response body exceeds the limit of 8388608 bytes")
            #expect(decoded <= 8 << 20)
        }
    }

    @Test(arguments: Wire.allCases)
    func collectFailsBeforeReadingWhenTheAnnouncedLengthIsOverTheLimit(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let tag = UUID().uuidString
            let error = try await session.perform(TransportRequest(url: server.url("/bytes?n=10000000&length=1&tag=\(tag)"))) { _, body in
                do throws(TransportError) {
                    _ = try await body.collect(upTo: 1_000_000)
                    return nil as TransportError?
                } catch {
                    return error
                }
            }
            #expect(error?.code == .bodyTooLarge)
            #expect(error?.message == "the response announces 10000000 bytes; the limit is 1000000")
        }
    }

    @Test func aBodyIsReadOnceAndOnlyInsideItsClosure() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let escaped = try await session.perform(TransportRequest(url: server.url("/trailers"))) { _, body in
                _ = try await body.collect(upTo: 100)
                do throws(TransportError) {
                    for try await _ in body {}
                    Issue.record("a body was read twice")
                } catch {
                    #expect(error.code == .bodyUnavailable)
                    #expect(error.message == "the response body can be read only once")
                }
                return body
            }
            do throws(TransportError) {
                _ = try await escaped.collect(upTo: 100)
                Issue.record("a body was read after its closure returned")
            } catch {
                #expect(error.code == .bodyUnavailable)
            }
        }
    }

    @Test(arguments: Wire.allCases)
    func redirectsAreFollowedAndTheFinalBodyStreamed(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let (head, text) = try await session.perform(TransportRequest(url: server.url("/redirect?status=302&to=/trailers"))) {
                head, body in (head, String(decoding: try await body.collect(upTo: 100), as: UTF8.self))
            }
            #expect(text == "Response body")
            #expect(head.status == .ok)
            #expect(head.effectiveURL == server.url("/trailers"))
            #expect(head.redirects == [RedirectStep(url: server.url("/redirect?status=302&to=/trailers"), status: .found)])
        }
    }

    /// A coding the reader cannot decode fails the first read; a request that asked for it itself gets
    /// the bytes as sent.
    @Test func aCodingTheReaderCannotDecode() async throws {
        let raw: [UInt8] = [0x0B, 0x02, 0x80, 0x68, 0x69, 0x03]
        try await withServerAndSession(handler: { _ in .respond(status: 200, headers: [("Content-Encoding", "br")], body: raw) }) {
            server, session in
            let error = try await session.perform(TransportRequest(url: server.url("/br"))) { _, body in
                do throws(TransportError) {
                    _ = try await body.collect(upTo: 100)
                    return nil as TransportError?
                } catch {
                    return error
                }
            }
            #expect(error?.code == .badContentEncoding)
            #expect(error?.message == "the response is encoded with br, which a streamed body is not decoded from")
            var asking = TransportRequest(url: server.url("/br"))
            asking.headerFields[.acceptEncoding] = "br"
            let bytes = try await session.perform(asking) { _, body in Array(try await body.collect(upTo: 100)) }
            #expect(bytes == raw)
            #expect(server.requests.map { $0.header("Accept-Encoding") } == ["deflate, gzip", "br"])
        }
    }

    /// Trailer fields count against the head limit, streamed or buffered.
    @Test func trailersCountAgainstTheHeadLimit() async throws {
        let trailer = "X-Big: " + String(repeating: "t", count: 2000)
        let reply = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\(trailer)\r\n\r\n".utf8)
        var configuration = SessionConfiguration()
        configuration.maxResponseHeaderSize = 1024
        try await withServerAndSession(configuration: configuration, handler: { _ in .raw(reply, after: .keepOpen) }) {
            server, session in
            let streamed = try await session.perform(TransportRequest(url: server.url("/t"))) { _, body in
                do throws(TransportError) {
                    _ = try await body.collect(upTo: 100)
                    return nil as TransportError?
                } catch {
                    return error
                }
            }
            #expect(streamed?.code == .headersTooLarge)
            let buffered = await transportError { try await session.execute(TransportRequest(url: server.url("/t"))) }
            #expect(buffered?.code == .headersTooLarge)
        }
    }
}
