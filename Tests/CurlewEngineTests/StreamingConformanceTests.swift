// Curlew — the streaming cases of the HTTP client conformance suite in Apple's HTTP API proposal, over
// HTTP/1.1 and HTTP/2 against real servers: read one buffer and stop, echo interleaved with the upload,
// speak interleaved, response and request trailers, cancel before the head and before the body, a body
// read slowly, an echoed megabyte and empty streamed bodies.

import CurlewEngine
import CurlewTestSupport
import Foundation
import HTTPTypes
import Testing

/// Reads a response of one-byte `A` chunks (an echo, a `/speak`) to its end, telling `hear` of each so the
/// request body can answer it; returns the chunks read.
func hearRounds(of body: ResponseBodyStream, answering hear: AsyncStream<Void>.Continuation) async throws -> Int {
    var heard = 0
    for try await chunk in body where !chunk.isEmpty {
        #expect(Array(chunk) == [UInt8(ascii: "A")])
        heard += 1
        hear.yield()
    }
    return heard
}

@Suite struct StreamingConformanceTests {
    /// Read one chunk of a 32 MiB body and return: `perform` returns normally, the transfer is aborted and
    /// the next request gets a sound connection. (The engine drops what arrives between the closure's
    /// return and the abort, which keeps an HTTP/2 connection's window open; with a 1 MB body a slowed
    /// machine had read to the end in that time.)
    @Test(arguments: Wire.allCases)
    func readOneBufferAndStop(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let first = try await session.perform(TransportRequest(url: server.url("/bytes?n=33554432&length=1"))) { head, body in
                #expect(head.status == .ok)
                var iterator = body.makeAsyncIterator()
                return try await iterator.next()
            }
            let chunk = try #require(first)
            #expect(Array(chunk) == streamPattern(count: chunk.count))
            let next = try await session.execute(TransportRequest(url: server.url("/request")))
            #expect(next.status == .ok)
            #expect(try ReceivedRequest(next.body).path == "/request")
            #expect(session.statistics.cancelledTransfers == 1)
        }
    }

    /// 1,000 one-byte writes, each sent only after the server's echo of the previous one arrived: the
    /// upload and the download run at the same time.
    @Test(arguments: Wire.allCases)
    func echoInterleavedWithTheUpload(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let (echoes, echoed) = AsyncStream<Void>.makeStream()
            let body = TransportRequest.Body.stream { writer in
                var iterator = echoes.makeAsyncIterator()
                for _ in 0..<1000 {
                    try await writer.write([UInt8(ascii: "A")])
                    guard await iterator.next() != nil else { return }
                }
            }
            let chunks = try await session.perform(TransportRequest(url: server.url("/echo"), method: .post, body: body)) { head, body in
                #expect(head.status == .ok)
                return try await hearRounds(of: body, answering: echoed)
            }
            echoed.finish()
            #expect(chunks == 1000)
        }
    }

    /// The server speaks first, 1,000 times one byte, and waits for the client's answer each time: the
    /// head arrives before the request body is done, and the request body outlives the response's.
    ///
    /// Over HTTP/2 the client stops answering after the last round rather than at the response's end:
    /// libcurl 7.88 reports the end of a response that has neither a length nor trailers only when the
    /// whole exchange ends (see the Streaming article). Over HTTP/1.1 the engine reads the chunked
    /// framing itself and sees the end at once.
    @Test(arguments: Wire.allCases)
    func speakInterleaved(wire: Wire) async throws {
        try await speak(wire: wire)
    }

    private func speak(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let (heard, hear) = AsyncStream<Void>.makeStream()
            let body = TransportRequest.Body.stream { writer in
                var answered = 0
                for await _ in heard {
                    try await writer.write("B")
                    answered += 1
                    if wire == .http2, answered == 1000 { return }
                }
            }
            let rounds = try await session.perform(
                TransportRequest(url: server.url("/speak?rounds=1000"), method: .post, body: body)
            ) { head, body in
                #expect(head.status == .ok)
                defer { hear.finish() }
                return try await hearRounds(of: body, answering: hear)
            }
            #expect(rounds == 1000)
        }
    }

    @Test(arguments: Wire.allCases)
    func responseTrailers(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let (text, trailers) = try await session.perform(TransportRequest(url: server.url("/trailers"))) { _, body in
                (String(decoding: try await body.collect(upTo: 1024), as: UTF8.self), body.trailerFields)
            }
            #expect(text == "Response body")
            let fields = try #require(trailers)
            #expect(fields.map { "\($0.name.canonicalName): \($0.value)" } == [
                "x-trailer-one: first-value", "x-trailer-two: second-value", "x-checksum: abc123",
            ])
            // A buffered response keeps them apart from the head too.
            let buffered = try await session.execute(TransportRequest(url: server.url("/trailers")))
            #expect(buffered.trailerFields == fields)
            #expect(buffered.headerFields[HTTPField.Name("X-Checksum")!] == nil)
        }
    }

    /// Trailers after a streamed body. libcurl 7.88 sends them over HTTP/1.1 only, so the request to an
    /// HTTP/2 server goes over a connection of its own speaking HTTP/1.1.
    @Test(arguments: Wire.allCases)
    func requestTrailers(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let body = TransportRequest.Body.stream { writer in try await writer.write("Hello World") }.trailers([
                HTTPField.Name("X-Request-Trailer-One")!: "first-trailer-value",
                HTTPField.Name("X-Request-Trailer-Two")!: "second-trailer-value",
            ])
            let response = try await session.execute(TransportRequest(url: server.url("/request"), method: .post, body: body))
            let received = try ReceivedRequest(response.body)
            #expect(received.body == "Hello World")
            #expect(received.trailers == [
                "x-request-trailer-one": ["first-trailer-value"], "x-request-trailer-two": ["second-trailer-value"],
            ])
            #expect(received.protocol == "http/1.1")
            #expect(received.header("transfer-encoding") == "chunked")
            #expect(response.httpVersion == .http1_1)
        }
    }

    /// Cancelled while the server has sent part of the body and stalls: `perform` throws, after handing
    /// over what arrived.
    @Test(arguments: Wire.allCases)
    func cancelBeforeTheBodyEnds(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let (started, start) = AsyncStream<Void>.makeStream()
            let outcome = await errorAfterCancelling(once: started) {
                try await session.perform(TransportRequest(url: server.url("/stall-body?n=1000"))) { head, body in
                    #expect(head.status == .ok)
                    start.yield()
                    for try await chunk in body { #expect(!chunk.isEmpty) }
                }
            }
            let error = try #require(outcome as? TransportError)
            #expect(error.code == .cancelled)
            #expect(await eventually { session.statistics.activeTransfers == 0 })
        }
    }

    /// Cancelled while waiting for a head that never comes: `perform` throws and the closure never runs.
    @Test(arguments: Wire.allCases)
    func cancelBeforeTheHead(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let ran = Locked(0)
            let tag = UUID().uuidString
            let task = Task {
                try await session.perform(TransportRequest(url: server.url("/stall?tag=\(tag)"))) { _, _ in ran.withLock { $0 += 1 } }
            }
            // Cancel once the server has the request, so the cancellation hits a running transfer.
            _ = try await server.stats { $0.tags[tag] != nil }
            task.cancel()
            let error = await #expect(throws: TransportError.self) { try await task.value }
            #expect(error?.code == .cancelled)
            #expect(ran.withLock { $0 } == 0)
        }
    }

    /// A megabyte read one byte at a time arrives whole and in order.
    @Test(arguments: Wire.allCases)
    func aBodyReadSlowly(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            // Each byte checked against the pattern on its own (byte i is i % 251), the reader yielding
            // between chunks.
            let (count, mismatches) = try await session.perform(TransportRequest(url: server.url("/bytes?n=1000000&length=1"))) {
                _, body in
                var count = 0
                var mismatches = 0
                for try await chunk in body {
                    for byte in chunk {
                        if byte != UInt8(truncatingIfNeeded: count % 251) { mismatches += 1 }
                        count += 1
                    }
                    await Task.yield()
                }
                return (count, mismatches)
            }
            #expect(count == 1_000_000)
            #expect(mismatches == 0)
        }
    }

    @Test(arguments: Wire.allCases)
    func aMegabyteEchoed(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let payload = streamPattern(count: 1_000_000)
            let body = TransportRequest.Body.stream(length: payload.count, replayable: true) { writer in
                for start in stride(from: 0, to: payload.count, by: 30_000) {
                    try await writer.write(payload[start..<min(payload.count, start + 30_000)])
                }
            }
            let echoed = try await session.perform(TransportRequest(url: server.url("/echo"), method: .post, body: body)) { _, body in
                try await body.collect(upTo: 2_000_000)
            }
            #expect(Array(echoed) == payload)
        }
    }

    @Test(arguments: Wire.allCases, [0, nil] as [Int?])
    func anEmptyStreamedBody(wire: Wire, length: Int?) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let body = TransportRequest.Body.stream(length: length) { _ in }
            let response = try await session.execute(TransportRequest(url: server.url("/request"), method: .post, body: body))
            let received = try ReceivedRequest(response.body)
            #expect(received.bodyLength == 0)
            if wire == .http1 {
                #expect(received.header("content-length") == (length == nil ? nil : "0"))
                #expect(received.header("transfer-encoding") == (length == nil ? "chunked" : nil))
            }
        }
    }
}
