// Curlew — request bodies produced while the request runs, and files, against real servers: an early
// answer during an upload, sending again after a 307 or on libcurl's retry of a dead connection, lengths
// that do not match, producers that throw, framing, Expect and a slow HTTP/2 reader.

@testable import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// A file of `count` pattern bytes in a fresh temporary directory, removed after `body`.
private func withFile<T>(_ count: Int, _ body: (String) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-body-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = directory + "/body.bin"
    try Data(streamPattern(count: count)).write(to: URL(fileURLWithPath: path))
    return try await ensuring({ try await body(path) }, cleanUp: { try? FileManager.default.removeItem(atPath: directory) })
}

/// Counts how often a producer ran and how its writes ended.
private final class ProducerLog: Sendable {
    private let state = Locked((runs: 0, cancelled: 0))
    func started() { state.withLock { $0.runs += 1 } }
    func stopped() { state.withLock { $0.cancelled += 1 } }
    var runs: Int { state.withLock { $0.runs } }
    var cancelled: Int { state.withLock { $0.cancelled } }
}

private struct ProducerFailure: Error, Equatable {
    let reason: String
}

/// The body kinds a request can send, each with the same 100,000 bytes (the file one needs a path).
private enum BodyKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case bytes, bytesWithTrailers, file, replayableStream, oneShotStream

    var testDescription: String { rawValue }

    func body(file: String, log: ProducerLog) throws -> TransportRequest.Body {
        let payload = streamPattern(count: 100_000)
        let produce: @Sendable (RequestBodyWriter) async throws -> Void = { writer in
            log.started()
            for start in stride(from: 0, to: payload.count, by: 10_000) { try await writer.write(payload[start..<(start + 10_000)]) }
        }
        switch self {
        case .bytes: return .bytes(payload)
        case .bytesWithTrailers: return TransportRequest.Body.bytes(payload).trailers([HTTPField.Name("X-Sum")!: "42"])
        case .file: return try .file(file)
        case .replayableStream: return .stream(length: payload.count, replayable: true, produce)
        case .oneShotStream: return .stream(length: payload.count, replayable: false, produce)
        }
    }
}

@Suite struct StreamedRequestTests {
    /// The server answers 401 after 64 KiB of an endless upload: the answer is delivered, nothing is
    /// resent, and the producer is cancelled. Then the same request on the same connection: over HTTP/2
    /// it only gets through because the server gave back the window of the bytes the first left unread.
    @Test(arguments: Wire.allCases)
    func anEarlyAnswerDuringAnUploadIsDelivered(wire: Wire) async throws {
        try await earlyAnswer(wire: wire)
    }

    /// Over HTTP/2 the response, without a length, ends (the server's END_STREAM) before the request body
    /// does: once the producer returns, the exchange completes at once. libcurl before 8.5 (and 8.10.0)
    /// would leave the transfer running until the idle timeout (the engine has curl run it once more after
    /// the body's end); from 8.10.1 libcurl fails the send that ends the body (the engine takes that
    /// failure back: the response was whole). Both fallbacks are also run forced, which holds on every
    /// version.
    @Test(arguments: [false, true])
    func theExchangeCompletesWhenTheBodyEndsAfterTheResponse(fallbacksForced: Bool) async throws {
        try await withStreamServerAndSession(.http2, configure: {
            $0.idleTimeout = .seconds(30)
            if fallbacksForced {
                $0.quirks.endedStreamNeedsAnotherRun = true
                $0.quirks.uploadAfterCompleteResponseFails = true
            }
        }) { server, session in
            let (proceed, go) = AsyncStream<Void>.makeStream()
            let body = TransportRequest.Body.stream { writer in
                try await writer.write("first")
                for await _ in proceed { return }
            }
            let request = TransportRequest(url: server.url("/early?status=200&length=none"), method: .post, body: body)
            let (text, completed, ended) = try await session.perform(request) { head, body in
                #expect(head.status.code == 200)
                // Without a length the body's end shows only when the exchange ends: read the answer's
                // bytes, then end the request body.
                var iterator = body.makeAsyncIterator()
                var text = ""
                while text.utf8.count < 9, let chunk = try await iterator.next() { text += String(decoding: chunk, as: UTF8.self) }
                let before = session.statistics.completedTransfers
                go.yield()
                let completed = await eventually(within: 20) { session.statistics.completedTransfers == before + 1 }
                let end = try await iterator.next()
                return (text, completed, end == nil)
            }
            #expect(text == "early 200")
            #expect(completed)
            #expect(ended)
            #expect(session.statistics.activeTransfers == 0)
            #expect(session.statistics.failedTransfers == 0)
            #expect(session.statistics.cancelledTransfers == 0)
        }
    }

    private func earlyAnswer(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let log = ProducerLog()
            let body = TransportRequest.Body.stream { writer in
                log.started()
                let chunk = [UInt8](repeating: 0x55, count: 16 * 1024)
                do {
                    while true { try await writer.write(chunk) }
                } catch {
                    log.stopped()
                    throw error
                }
            }
            let request = TransportRequest(url: server.url("/early?status=401&read=65536"), method: .put, body: body)
            let (status, text) = try await session.perform(request) { head, body in
                (head.status.code, String(decoding: try await body.collect(upTo: 100), as: UTF8.self))
            }
            #expect(status == 401)
            #expect(text == "early 401")
            #expect(log.runs == 1)
            #expect(log.cancelled == 1)
            // Buffered, the same.
            let buffered = try await session.execute(request)
            #expect(buffered.status.code == 401)
            #expect(buffered.body.text == "early 401")
            #expect(log.runs == 2)
        }
    }

    /// RFC 9113 §8.1 lets an HTTP/2 server end the request side with RST_STREAM NO_ERROR after a complete
    /// early answer. When both arrive in one read, libcurl 7.88 drops the answer and fails the transfer
    /// (the `curl` tool exits with 92 and no status): the request fails with `streamReset`. The server
    /// sends both in one write, but a loaded machine may still read them apart, and then the answer is
    /// delivered. Either way the outcome is exact: never a hang, another error or a wrong answer.
    @Test func anHTTP2EarlyAnswerWithAResetIsLostByLibcurl() async throws {
        try await withStreamServerAndSession(.http2) { server, session in
            let body = TransportRequest.Body.stream { writer in
                let chunk = [UInt8](repeating: 0x55, count: 16 * 1024)
                while true { try await writer.write(chunk) }
            }
            let request = TransportRequest(url: server.url("/early?status=401&read=65536&reset=1"), method: .put, body: body)
            do {
                let response = try await session.execute(request)
                #expect(response.status.code == 401)
                #expect(response.body.text == "early 401")
            } catch let error as TransportError {
                #expect(error.code == .streamReset)
                #expect(error.curlCode == 92)
            }
        }
    }

    /// An HTTP/2 server answers 200 whole after 64 KiB of a 1 MiB body and resets the request side with
    /// NO_ERROR 200 ms later, as nginx does when it answers without reading the body. libcurl before 8.1.1
    /// then neither sends more nor ends the transfer, which would wait for the idle timeout
    /// (``CurlQuirks/earlyAnswerStallsHTTP2Upload``); the engine completes the exchange with the answer
    /// once nothing moves. Run with the workaround as the library needs it and forced, which holds on
    /// every version: the answer, exactly, for a body in memory and a streamed one. On a loaded machine
    /// the answer and the reset may still be read together, and libcurl 7.88 then loses the answer
    /// (`streamReset`, as in the test above); never a timeout or another error.
    @Test(arguments: [false, true], [false, true])
    func anHTTP2AnswerWholeBeforeTheBodyCompletesTheExchange(forced: Bool, streamedBody: Bool) async throws {
        try await withStreamServerAndSession(.http2, configure: {
            $0.idleTimeout = .seconds(20)
            if forced { $0.quirks.earlyAnswerStallsHTTP2Upload = true }
        }) { server, session in
            let size = 1 << 20
            let body: TransportRequest.Body =
                streamedBody
                ? .stream(length: size) { writer in
                    let chunk = [UInt8](repeating: 0x55, count: 16 * 1024)
                    for _ in 0..<(size / chunk.count) { try await writer.write(chunk) }
                }
                : .data(Data(repeating: 0x55, count: size))
            let request = TransportRequest(
                url: server.url("/early?status=200&read=65536&reset=later"), method: .post, body: body)
            do {
                let response = try await session.execute(request)
                #expect(response.status.code == 200)
                #expect(response.body.text == "early 200")
                #expect(session.statistics.failedTransfers == 0)
            } catch let error as TransportError {
                #expect(error.code == .streamReset)
                #expect(error.curlCode == 92)
            }
            #expect(session.statistics.activeTransfers == 0)
        }
    }

    /// A 307 sends the body again: a file is reopened, a replayable stream produced again; a stream that
    /// can be produced once fails with `bodyNotReplayable`.
    @Test(arguments: Wire.allCases, [BodyKind.file, .replayableStream, .oneShotStream])
    fileprivate func a307SendsTheBodyAgain(wire: Wire, kind: BodyKind) async throws {
        try await withFile(100_000) { path in
            try await withStreamServerAndSession(wire) { server, session in
                let log = ProducerLog()
                let request = TransportRequest(
                    url: server.url("/redirect?status=307&to=/request"), method: .post, body: try kind.body(file: path, log: log))
                if kind == .oneShotStream {
                    let error = await transportError { try await session.execute(request) }
                    #expect(error?.code == .bodyNotReplayable)
                    #expect(log.runs == 1)
                    return
                }
                let response = try await session.execute(request)
                let received = try ReceivedRequest(response.body)
                #expect(received.path == "/request")
                #expect(received.method == "POST")
                #expect(received.bodyLength == 100_000)
                #expect(Array(received.body.unicodeScalars.map { UInt8($0.value) }) == streamPattern(count: 100_000))
                #expect(response.redirects.map(\.status.code) == [307])
                #expect(log.runs == (kind == .replayableStream ? 2 : 0))
            }
        }
    }

    /// libcurl sends a request again on a new connection when the reused one turns out dead before any
    /// response byte: the server reads the whole request and closes. Every body kind arrives whole the
    /// second time; a stream that can be produced once fails with `bodyNotReplayable`. (A body with
    /// trailers never reuses a connection: see the next test.)
    @Test(arguments: BodyKind.allCases.filter { $0 != .bytesWithTrailers })
    fileprivate func libcurlsRetryOnADeadConnectionSendsTheBodyAgain(kind: BodyKind) async throws {
        try await withFile(100_000) { path in
            try await withStreamServerAndSession(.http1) { server, session in
                let warmUp = try await session.execute(TransportRequest(url: server.url("/request")))
                let first = try ReceivedRequest(warmUp.body)
                let log = ProducerLog()
                let tag = UUID().uuidString
                let request = TransportRequest(
                    url: server.url("/request?drop-once=\(tag)"), method: .post, body: try kind.body(file: path, log: log))
                if kind == .oneShotStream {
                    let error = await transportError { try await session.execute(request) }
                    #expect(error?.code == .bodyNotReplayable)
                    #expect(error?.message == "libcurl must send the request again on a new connection, and its body cannot be replayed")
                    let dropped = try await server.stats().dropped
                    #expect(dropped.contains(tag))
                    return
                }
                let response = try await session.execute(request)
                let received = try ReceivedRequest(response.body)
                let dropped = try await server.stats().dropped
                #expect(dropped.contains(tag))
                #expect(received.connection != first.connection)
                #expect(received.request == 1)
                #expect(received.bodyLength == 100_000)
                #expect(Array(received.body.unicodeScalars.map { UInt8($0.value) }) == streamPattern(count: 100_000))
                #expect(received.trailers == (kind == .bytesWithTrailers ? ["x-sum": ["42"]] : [:]))
                #expect(log.runs == (kind == .replayableStream ? 2 : 0))
            }
        }
    }

    /// libcurl before 8.7 frees memory twice when an easy handle that sent trailers uploads again — its
    /// own retry on a dead reused connection does that. There a request with trailers opens a connection of
    /// its own and its handle is not reused (``CurlQuirks/trailersSpoilTheHandle``; also run forced,
    /// which holds on every version); from 8.7 both are reused. Either way, trailer uploads in a row, then
    /// uploads without, all work.
    @Test(arguments: [false, true])
    func requestsWithTrailersReuseAConnectionAndAHandleOnlyWhereLibcurlAllows(fallbackForced: Bool) async throws {
        var fresh = true
        try await withFile(10_000) { path in
            try await withStreamServerAndSession(.http1, configure: {
                if fallbackForced { $0.quirks.trailersSpoilTheHandle = true }
                fresh = $0.quirks.trailersSpoilTheHandle
            }) { server, session in
                let checksum: HTTPFields = [HTTPField.Name("X-Checksum")!: "c"]
                let bodies: [TransportRequest.Body] = [
                    TransportRequest.Body.string("one").trailers(checksum),
                    TransportRequest.Body.stream { writer in try await writer.write("two") }.trailers(checksum),
                    try TransportRequest.Body.file(path).trailers { checksum },
                    TransportRequest.Body.stream { writer in try await writer.write("four") },
                    TransportRequest.Body.string("five"),
                ]
                var connections: [Int] = []
                var received: [[String]] = []
                for body in bodies {
                    let response = try await session.execute(TransportRequest(url: server.url("/request"), method: .post, body: body))
                    let echo = try ReceivedRequest(response.body)
                    connections.append(echo.connection)
                    received.append([String(echo.bodyLength), echo.trailers["x-checksum"]?.first ?? "-"])
                }
                #expect(received == [["3", "c"], ["3", "c"], ["10000", "c"], ["4", "-"], ["4", "-"]])
                if fresh {
                    // Each trailer request opened its own connection, which later requests may reuse, and
                    // its handle was destroyed: one handle made per trailer request, one more after them.
                    #expect(Set(connections.prefix(3)).count == 3)
                    #expect(connections.prefix(3).contains(connections[3]))
                    #expect(session.statistics.handlesCreated == 4)
                } else {
                    // One connection and one handle for all five.
                    #expect(Set(connections).count == 1)
                    #expect(session.statistics.handlesCreated == 1)
                }
            }
        }
    }

    @Test(arguments: Wire.allCases, [(10, 5), (10, 15)])
    func aStreamThatDoesNotMatchItsLengthFails(wire: Wire, lengths: (declared: Int, written: Int)) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let body = TransportRequest.Body.stream(length: lengths.declared) { writer in
                for _ in 0..<lengths.written { try await writer.write([0x61]) }
            }
            let error = await transportError {
                try await session.execute(TransportRequest(url: server.url("/request"), method: .post, body: body))
            }
            #expect(error?.code == .bodyLengthMismatch)
            #expect(
                error?.message
                    == (lengths.written < lengths.declared
                        ? "the request body's producer wrote 5 of the 10 bytes it declared"
                        : "the request body's producer wrote more than the 10 bytes it declared"))
        }
    }

    /// A producer that throws fails the request with its own error (`perform`), or with
    /// `requestBodyFailed` carrying it (`execute`); nothing more is sent.
    @Test(arguments: Wire.allCases)
    func aProducerThatThrowsFailsTheRequestWithItsError(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let body = TransportRequest.Body.stream { writer in
                try await writer.write("part one")
                throw ProducerFailure(reason: "disk gone")
            }
            let request = TransportRequest(url: server.url("/request"), method: .post, body: body)
            await #expect(throws: ProducerFailure(reason: "disk gone")) {
                try await session.perform(request) { _, _ in Issue.record("a failed upload got a response") }
            }
            let error = await transportError { try await session.execute(request) }
            #expect(error?.code == .requestBodyFailed)
            #expect(error?.underlying as? ProducerFailure == ProducerFailure(reason: "disk gone"))
        }
    }

    @Test func aLengthIsSentAsContentLengthAndNoLengthChunked() async throws {
        try await withFile(300_000) { path in
            try await withStreamServerAndSession(.http1) { server, session in
                let known = TransportRequest.Body.stream(length: 3) { writer in try await writer.write("abc") }
                let unknown = TransportRequest.Body.stream { writer in try await writer.write("abc") }
                let region = try TransportRequest.Body.file(path, range: 1000..<1100)
                var fields: [[String?]] = []
                var bodies: [[UInt8]] = []
                for body in [known, unknown, region] {
                    let response = try await session.execute(TransportRequest(url: server.url("/request"), method: .put, body: body))
                    let received = try ReceivedRequest(response.body)
                    fields.append([received.method, received.header("content-length"), received.header("transfer-encoding"), received.header("expect")])
                    bodies.append(received.body.unicodeScalars.map { UInt8($0.value) })
                }
                #expect(fields == [["PUT", "3", nil, nil], ["PUT", nil, "chunked", nil], ["PUT", "100", nil, nil]])
                #expect(bodies == [Array("abc".utf8), Array("abc".utf8), streamPattern(count: 100, from: 1000)])
            }
        }
    }

    /// With an `Expect: 100-continue` threshold, a body of unknown length counts as reaching it.
    @Test func aBodyOfUnknownLengthReachesAnyExpectThreshold() async throws {
        try await withStreamServerAndSession(.http1, configure: { $0.expectContinueThreshold = 1 << 30 }) { server, session in
            let unknown = TransportRequest.Body.stream { writer in try await writer.write("abc") }
            let small = TransportRequest.Body.stream(length: 3) { writer in try await writer.write("abc") }
            var seen: [String?] = []
            for body in [unknown, small] {
                let response = try await session.execute(TransportRequest(url: server.url("/request"), method: .post, body: body))
                seen.append(try ReceivedRequest(response.body).header("expect"))
            }
            #expect(seen == ["100-continue", nil])
            let shown = await session.wireRequest(for: TransportRequest(url: server.url("/x"), method: .post, body: unknown))
            #expect(shown.headerFields[.expect] == "100-continue")
        }
    }

    /// An HTTP/2 upload to a server that reads slowly completes whole: the engine's held writes (libcurl
    /// 7.88 would otherwise spin on the exhausted flow-control window, ``CurlQuirks/http2UploadSpinsWithoutWindow``)
    /// never stall it, nor do they where libcurl does not spin (forced there).
    @Test(arguments: [Optional(2 << 20), nil], [false, true])
    func aSlowHTTP2ReaderGetsTheWholeUpload(length: Int?, heldWritesForced: Bool) async throws {
        try await withStreamServerAndSession(.http2, configure: {
            if heldWritesForced { $0.quirks.http2UploadSpinsWithoutWindow = true }
            // Alone on its connection, nothing else can lose bytes: kept over HTTP/2 where it spins.
            $0.quirks.uploadEndDropsPausedStreamData = false
        }) { server, session in
            let chunk = [UInt8](repeating: 0x62, count: 64 * 1024)
            let body = TransportRequest.Body.stream(length: length) { writer in
                for _ in 0..<32 { try await writer.write(chunk) }
            }
            let response = try await session.execute(
                TransportRequest(url: server.url("/slow-read?rate=4194304"), method: .post, body: body))
            // Over HTTP/1.1 where such uploads stall over HTTP/2 (CurlQuirks.http2UploadsStall).
            #expect(response.httpVersion == (CurlQuirks.current.http2UploadsStall ? .http1_1 : .http2))
            #expect(response.body.text == #"{"received": 2097152}"#)
        }
    }

    /// Where HTTP/2 uploads read through libcurl's read callback stall (8.6 and 8.10,
    /// ``CurlQuirks/http2UploadsStall``), such a request to an https host goes over HTTP/1.1 and completes,
    /// while a body in memory, given to libcurl whole, keeps HTTP/2. Forced here, which holds on every
    /// version; on those versions the whole suite runs so.
    @Test func uploadsReadThroughTheCallbackAvoidHTTP2WhereTheyStall() async throws {
        try await withStreamServerAndSession(.http2, configure: { $0.quirks.http2UploadsStall = true }) { server, session in
            let stream = TransportRequest.Body.stream { writer in try await writer.write("streamed") }
            let streamed = try await session.execute(TransportRequest(url: server.url("/request"), method: .post, body: stream))
            let streamedEcho = try ReceivedRequest(streamed.body)
            #expect(streamed.httpVersion == .http1_1)
            #expect(streamedEcho.protocol == "http/1.1")
            #expect(streamedEcho.body == "streamed")
            let bytes = try await session.execute(TransportRequest(url: server.url("/request"), method: .post, body: .string("bytes")))
            let bytesEcho = try ReceivedRequest(bytes.body)
            #expect(bytes.httpVersion == .http2)
            #expect(bytesEcho.protocol == "h2")
            #expect(bytesEcho.body == "bytes")
        }
    }

    @Test func trailerFieldsThatFrameTheMessageAreRefusedBeforeSending() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let tag = UUID().uuidString
            let body = TransportRequest.Body.string("abc").trailers([.contentLength: "3"])
            let error = await transportError {
                try await session.execute(TransportRequest(url: server.url("/request?tag=\(tag)"), method: .post, body: body))
            }
            #expect(error?.code == .invalidHeader)
            #expect(error?.message == "Content-Length may not be sent as a trailer field")
            let seen = try await server.stats().tags[tag]
            #expect(seen == nil)
        }
    }

    @Test func fileBodiesAreCheckedWhenMade() throws {
        #expect(throws: TransportError.self) { try TransportRequest.Body.file("/nonexistent/curlew") }
        #expect(throws: TransportError.self) { try TransportRequest.Body.file(FileManager.default.temporaryDirectory.path) }
        do {
            _ = try TransportRequest.Body.file(#filePath, range: 0..<(1 << 40))
            Issue.record("a range past the file's end was accepted")
        } catch {
            #expect(error.code == .invalidBody)
        }
    }

    /// A file that lost bytes since its body was made fails with `bodyLengthMismatch` when the read comes
    /// up short; one that grew fails before its last byte goes out, so the server never gets a body that
    /// looks complete. (Both are found by the reads as the file is sent.)
    @Test(arguments: [-1000, 1000])
    func aFileThatChangedSizeFails(change: Int) async throws {
        try await withFile(1 << 20) { path in
            try await withStreamServerAndSession(.http1) { server, session in
                let body = try TransportRequest.Body.file(path)
                let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
                if change < 0 {
                    try handle.truncate(atOffset: UInt64((1 << 20) + change))
                } else {
                    try handle.seekToEnd()
                    try handle.write(contentsOf: Data(count: change))
                }
                try handle.close()
                let tag = UUID().uuidString
                let error = await transportError {
                    try await session.execute(TransportRequest(url: server.url("/request?tag=\(tag)"), method: .post, body: body))
                }
                #expect(error?.code == .bodyLengthMismatch)
                #expect(
                    error?.message
                        == (change < 0
                            ? "\(path) ended after 1047576 of the 1048576 bytes it had when the body was made"
                            : "\(path) has 1049576 bytes, not the 1048576 it had when the body was made"))
                // The server never answered: it did not get a whole body.
                let done = try await server.stats().tags[tag]?.done
                #expect(done != true)
            }
        }
    }
}
