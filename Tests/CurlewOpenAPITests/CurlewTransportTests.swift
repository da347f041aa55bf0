// Curlew — the generated client over CurlewTransport against openapi_server.py on loopback: JSON, bodies
// streamed both ways, event streams, multipart, repeated fields, HEAD, cancellation, timeouts, and the
// bodies that must never be sent twice. No test measures time.

import Curlew
import CurlewEngine
@testable import CurlewOpenAPI
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import OpenAPIFixture
import OpenAPIRuntime
import Testing

@Suite(.timeLimit(.minutes(2))) struct CurlewTransportTests {
    // MARK: JSON

    @Test func aJSONOperationDecodesItsDocumentedResponses() async throws {
        try await withClient { fixture in
            let greeting = try await fixture.client.getGreeting(query: .init(name: "Ada"))
            #expect(try greeting.ok.body.json == .init(message: "Hello, Ada!"))
            let stranger = try await fixture.client.getGreeting()
            #expect(try stranger.ok.body.json.message == "Hello, Stranger!")
            let refused = try await fixture.client.getGreeting(query: .init(name: "bad"))
            #expect(try refused.badRequest.body.json == .init(error: "the name `bad` is refused"))
        }
    }

    @Test func aCallThatAcceptsOnlyJSONHasItsResponseCollectedOthersStreamed() async throws {
        try await withClient { fixture in
            _ = try await fixture.client.getGreeting().ok.body.json
            // Collected by the engine's sink (which the buffer counters see), not streamed.
            #expect(fixture.session.statistics.largestTransferBuffer > 0)
        }
        try await withClient { fixture in
            let body = try await fixture.client.download(query: .init(size: 100_000)).ok.body.binary
            _ = try await [UInt8](collecting: body, upTo: 100_000)
            #expect(fixture.session.statistics.largestTransferBuffer == 0)
        }
        let accepts = { (value: String) in CurlewTransport.acceptsOnlyJSON([.accept: value]) }
        #expect(accepts("application/json"))
        #expect(accepts("application/json; charset=utf-8, application/problem+json;q=0.5"))
        #expect(accepts("Application/JSON"))
        #expect(!accepts("application/json, text/event-stream"))
        #expect(!accepts("application/jsonl"))
        #expect(!accepts("*/*"))
        #expect(!accepts(""))
        #expect(!CurlewTransport.acceptsOnlyJSON([:]))
    }

    // MARK: Request bodies

    @Test func aStreamedUploadOfUnknownLengthIsSentChunkedAsItIsProduced() async throws {
        let chunk = sampleBytes(65_536)
        try await withClient { fixture in
            let (stream, continuation) = AsyncThrowingStream<HTTPBody.ByteChunk, any Error>.makeStream()
            let producer = Task {
                for index in 0..<64 {
                    continuation.yield(ArraySlice(chunk.map { $0 ^ UInt8(index) }))
                }
                continuation.finish()
            }
            let report = try await fixture.client.upload(body: .binary(HTTPBody(stream, length: .unknown))).ok.body.json
            await producer.value
            let sent = (0..<64).flatMap { index in chunk.map { $0 ^ UInt8(index) } }
            #expect(report.bytes == 4 * 1024 * 1024)
            #expect(report.chunked == true)
            #expect(report.sha256 == (try await sha256Hex(sent)))
        }
    }

    @Test func aReplayableBodyOfKnownLengthIsSentWithItsLength() async throws {
        let small = sampleBytes(1000, seed: 1)
        let large = sampleBytes(300_000, seed: 2)
        try await withClient { fixture in
            // Small: read first and sent from memory.
            let first = try await fixture.client.upload(body: .binary(HTTPBody(small))).ok.body.json
            #expect(first.bytes == 1000)
            #expect(first.chunked == false)
            #expect(first.sha256 == (try await sha256Hex(small)))
            // Larger than the in-memory limit: streamed, with its Content-Length.
            let second = try await fixture.client.upload(body: .binary(HTTPBody(large))).ok.body.json
            #expect(second.bytes == 300_000)
            #expect(second.chunked == false)
            #expect(second.sha256 == (try await sha256Hex(large)))
        }
    }

    @Test func aBodyThatBreaksItsLengthFailsTypedAndSendsNothingMore() async throws {
        try await withClient { fixture in
            // A replayable body of announced length 10 with 3 bytes: read first, refused before sending.
            let short = HTTPBody([1, 2, 3], length: .known(10))
            let error = await #expect(throws: (any Error).self) {
                _ = try await fixture.client.upload(body: .binary(short))
            }
            #expect(transportError(error)?.code == .bodyLengthMismatch)
            // A stream that fails while it is being sent: its own error, as the provider layer reports it.
            struct Broken: Error, Equatable {}
            let (stream, continuation) = AsyncThrowingStream<HTTPBody.ByteChunk, any Error>.makeStream()
            continuation.yield([1, 2, 3])
            continuation.finish(throwing: Broken())
            let failure = await #expect(throws: (any Error).self) {
                _ = try await fixture.client.upload(body: .binary(HTTPBody(stream, length: .unknown)))
            }
            guard case .underlying(let underlying, _)? = curlewError(failure) else {
                Issue.record("expected CurlewError.underlying, got \(String(describing: failure))")
                return
            }
            #expect(underlying as? Broken == Broken())
        }
    }

    // MARK: Full duplex

    @Test func theRequestBodyIsFedAfterTheResponseHeadAndEchoedPieceByPiece() async throws {
        try await withClient { fixture in
            // The body is fed only once the call has returned with the response: the transport must not wait
            // for the request body's end before handing the head out.
            let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
            let response = try await fixture.client.echo(body: .binary(HTTPBody(stream, length: .unknown)))
            let echoed = try response.ok.body.binary
            #expect(echoed.length == .unknown)
            var chunks = echoed.makeAsyncIterator()
            for round in 0..<5 {
                let piece = Array("ping \(round)".utf8)
                continuation.yield(ArraySlice(piece))
                var received: [UInt8] = []
                while received.count < piece.count {
                    guard let chunk = try await chunks.next() else { break }
                    received += chunk
                }
                #expect(received == piece)
            }
            continuation.finish()
            #expect(try await chunks.next() == nil)
        }
    }

    // MARK: Response bodies

    @Test func aDownloadIsStreamedWithItsLengthEveryByteInOrder() async throws {
        let size = 16 * 1024 * 1024
        // The server's pattern repeats every 251 bytes: a chunk at offset `o` matches `pattern` from `o % 251`.
        let pattern = (0..<(251 * 4096)).map(patternByte)
        try await withClient { fixture in
            let body = try await fixture.client.download(query: .init(size: size)).ok.body.binary
            #expect(body.length == .known(Int64(size)))
            #expect(body.iterationBehavior == .single)
            var count = 0
            var mismatches = 0
            for try await chunk in body {
                var offset = chunk.startIndex
                while offset < chunk.endIndex {
                    let start = (count + offset - chunk.startIndex) % 251
                    let length = min(chunk.endIndex - offset, pattern.count - start)
                    if !chunk[offset..<(offset + length)].elementsEqual(pattern[start..<(start + length)]) { mismatches += 1 }
                    offset += length
                }
                count += chunk.count
            }
            #expect(count == size)
            #expect(mismatches == 0)
        }
    }

    /// Bytes the client holds of a download nobody reads, measured at the server (bytes its kernel
    /// accepted, less its socket's unsent queue and the client socket's receive queue): at most the
    /// session's receive buffer plus its stream buffer.
    @Test func aDownloadNobodyReadsHoldsBoundedMemory() async throws {
        var options = StreamServerOptions()
        options.sendBuffer = 65536
        try await withStreamServer(options) { server in
            let session = try CurlSession()
            try await ensuring({
                let transport = CurlewTransport(session)
                let tag = UUID().uuidString
                let (response, body) = try await transport.send(
                    HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/bytes?n=268435456&length=1&tag=\(tag)"),
                    body: nil, baseURL: URL(string: server.url("/"))!, operationID: "download")
                #expect(response.status == .ok)
                #expect(body?.length == .known(268_435_456))
                var stats = try await server.stats { $0.tags[tag]?.blocked == true }
                guard var entry = stats.tags[tag], entry.blocked else {
                    Issue.record("the server never blocked writing: \(String(describing: stats.tags[tag]))")
                    return
                }
                // Blocked means nothing moves any more; read again until two readings agree.
                while true {
                    try await Task.sleep(for: .milliseconds(50))
                    stats = try await server.stats()
                    guard let next = stats.tags[tag], next.written != entry.written || next.outq != entry.outq else { break }
                    entry = next
                }
                let inq = try #require(receiveQueue(ofLocalPort: entry.peerPort, remotePort: server.port))
                let held = entry.written - entry.outq - inq
                let bound = SessionConfiguration().receiveBufferSize + SessionConfiguration().streamBufferSize
                #expect(held > 0)
                #expect(held <= bound, "held \(held), bound \(bound)")
                withExtendedLifetime(body) {}
            }, cleanUp: { await session.shutdown() })
        }
    }

    @Test func aResponseToHEADHasNoBodyAndItsHeaders() async throws {
        try await withClient { fixture in
            let head = try await fixture.client.downloadHead(query: .init(size: 12_345))
            #expect(try head.ok.headers.contentLength == 12_345)
            // The transport itself: no body at all, and the connection is kept.
            let (response, body) = try await fixture.transport.send(
                HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/download?size=99"), body: nil,
                baseURL: fixture.server.serverURL, operationID: "downloadHead")
            #expect(response.status == .ok)
            #expect(response.headerFields[.contentLength] == "99")
            #expect(body == nil)
            #expect(fixture.session.statistics.connectionsOpened == 1)
        }
    }

    @Test func anEventStreamIsDecodedAsItArrives() async throws {
        try await withClient { fixture in
            let body = try await fixture.client.streamEvents(query: .init(count: 5)).ok.body.textEventStream
            var events: [ServerSentEventWithJSONData<Components.Schemas.Tick>] = []
            for try await event in body.asDecodedServerSentEventsWithJSONData(of: Components.Schemas.Tick.self) {
                events.append(event)
            }
            #expect(events.map(\.data?.index) == [1, 2, 3, 4, 5])
            #expect(events.map(\.id) == ["1", "2", "3", "4", "5"])
            #expect(events.map(\.event) == Array(repeating: "tick", count: 5))
        }
    }

    @Test func aMultipartUploadReachesTheServerPartByPart() async throws {
        let file = sampleBytes(100_000, seed: 3)
        try await withClient { fixture in
            let form: MultipartBody<Operations.UploadForm.Input.Body.MultipartFormPayload> = [
                .metadata(.init(payload: .init(body: .init(name: "report")))),
                .file(.init(payload: .init(body: HTTPBody(file)), filename: "data.bin")),
            ]
            let report = try await fixture.client.uploadForm(body: .multipartForm(form)).ok.body.json
            #expect(report.parts.map(\.name) == ["metadata", "file"])
            #expect(report.parts.map(\.filename) == [nil, "data.bin"])
            #expect(report.parts.map(\.contentType) == ["application/json; charset=utf-8", "application/octet-stream"])
            #expect(report.parts.last?.size == 100_000)
            #expect(report.parts.last?.sha256 == (try await sha256Hex(file)))
        }
    }

    // MARK: Header fields

    @Test func everyRepeatedResponseFieldIsKept() async throws {
        try await withClient { fixture in
            let (response, body) = try await fixture.transport.send(
                HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/login"), body: nil,
                baseURL: fixture.server.serverURL, operationID: "login")
            #expect(response.status == .ok)
            #expect(
                response.headerFields[values: .setCookie] == [
                    "session=abc; Path=/; HttpOnly", "theme=dark; Path=/", "lang=en; Path=/",
                ])
            let json = try await String(collecting: body ?? HTTPBody(), upTo: 1024)
            #expect(json.contains("\"ok\": true") || json.contains("\"ok\":true"))
            // Through the generated client, the documented header is there too.
            let login = try await fixture.client.login()
            #expect(try login.ok.body.json.ok == true)
            #expect(try login.ok.headers.setCookie?.contains("session=abc") == true)
        }
    }

    // MARK: Cancellation and timeouts

    @Test func cancellingTheCallAbortsTheTransfer() async throws {
        try await withClient { fixture in
            let call = Task { try await fixture.client.slow(query: .init(delay: 30)) }
            #expect(await eventually { fixture.session.statistics.activeTransfers == 1 })
            call.cancel()
            let result = await call.result
            guard case .failure(let error) = result else {
                Issue.record("expected the cancelled call to fail, got \(result)")
                return
            }
            #expect(curlewError(error)?.isCancellation == true)
            #expect(await eventually { fixture.session.statistics.activeTransfers == 0 })
            #expect(fixture.session.statistics.cancelledTransfers == 1)
        }
    }

    @Test func cancellingTheReaderOfABodyAbortsTheTransfer() async throws {
        try await withClient { fixture in
            let body = try await fixture.client.download(query: .init(size: 256 * 1024 * 1024)).ok.body.binary
            let firstChunk = Locked(false)
            let reader = Task {
                var chunks = body.makeAsyncIterator()
                guard try await chunks.next() != nil else { return 0 }
                firstChunk.withLock { $0 = true }
                // Holds the body until cancelled, then reads on: the read sees the cancellation.
                while !Task.isCancelled { await Task.yield() }
                var count = 0
                while let chunk = try await chunks.next() { count += chunk.count }
                return count
            }
            #expect(await eventually { firstChunk.withLock { $0 } })
            reader.cancel()
            let result = await reader.result
            guard case .failure(let error) = result else {
                Issue.record("expected the cancelled read to fail, got \(result)")
                return
            }
            #expect(curlewError(error)?.isCancellation == true)
            #expect(await eventually { fixture.session.statistics.activeTransfers == 0 })
            #expect(fixture.session.statistics.cancelledTransfers == 1)
        }
    }

    @Test func anOperationsOwnTimeoutAppliesToItAlone() async throws {
        var configuration = CurlewTransport.Configuration()
        configuration.operations["slow"] = .init(timeout: .milliseconds(300))
        try await withClient(transport: configuration) { fixture in
            let error = await #expect(throws: (any Error).self) {
                _ = try await fixture.client.slow(query: .init(delay: 5))
            }
            let failure = transportError(error)
            #expect(failure?.code == .timedOut)
            #expect(failure?.timeout == .total)
            // Another operation keeps the session's.
            let greeting = try await fixture.client.getGreeting().ok.body.json
            #expect(greeting.message == "Hello, Stranger!")
        }
    }

    // MARK: Bodies sent once

    /// A retry that resends any POST, with no waits.
    static func retry() -> RetryMiddleware {
        var policy = RetryPolicy.default
        policy.methods.insert(.post)
        policy.backoff = Backoff(base: .zero, cap: .zero, jitter: .none)
        return RetryMiddleware(policy: policy)
    }

    @Test func aRetryResendsABodyThatCanBeIteratedAgain() async throws {
        let bytes = sampleBytes(200_000, seed: 4)
        try await withClient(middleware: [Self.retry()]) { fixture in
            let key = UUID().uuidString
            // Larger than the in-memory limit: streamed each time from the body's own sequence.
            let result = try await fixture.client.flaky(query: .init(key: key, failures: 2), body: .binary(HTTPBody(bytes)))
            #expect(try result.ok.body.json == .init(attempts: 3, bytes: 200_000))
            #expect(try await fixture.client.stats(query: .init(key: key)).ok.body.json == .init(attempts: 3, lastBodyBytes: 200_000))
        }
    }

    @Test func aRetryOfABodyIteratedOnceFailsTypedAndSendsItOnce() async throws {
        try await withClient(middleware: [Self.retry()]) { fixture in
            let key = UUID().uuidString
            let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
            continuation.yield(ArraySlice(sampleBytes(5000)))
            continuation.finish()
            let error = await #expect(throws: (any Error).self) {
                _ = try await fixture.client.flaky(
                    query: .init(key: key, failures: 1), body: .binary(HTTPBody(stream, length: .known(5000))))
            }
            let failure = transportError(error)
            #expect(failure?.code == .bodyNotReplayable)
            #expect(
                failure?.message == "the request would be retried after status 503, but its body is a stream that cannot be sent again")
            let stats = try await fixture.client.stats(query: .init(key: key)).ok.body.json
            #expect(stats == .init(attempts: 1, lastBodyBytes: 5000))
        }
    }

    @Test func aRedirectThatResendsABodyIteratedOnceFailsTyped() async throws {
        let server = try await LocalHTTPServer.start { request in
            request.uri == "/moved"
                ? .respond(status: 307, headers: [("Location", "/target")])
                : .json(#"{"bytes": 0}"#)
        }
        let session = try CurlSession()
        try await ensuring({
            let transport = CurlewTransport(session)
            let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
            continuation.yield([1, 2, 3])
            continuation.finish()
            let error = await #expect(throws: CurlewError.self) {
                _ = try await transport.send(
                    HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/moved"),
                    body: HTTPBody(stream, length: .known(3)), baseURL: URL(string: server.baseURL)!, operationID: "upload")
            }
            guard case .transport(let failure)? = error else {
                Issue.record("expected CurlewError.transport, got \(String(describing: error))")
                return
            }
            #expect(failure.code == .bodyNotReplayable)
            #expect(server.requests.map(\.uri) == ["/moved"])
            // A body that can be iterated again follows the redirect with its bytes.
            let (response, _) = try await transport.send(
                HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/moved"), body: HTTPBody([4, 5, 6]),
                baseURL: URL(string: server.baseURL)!, operationID: "upload")
            #expect(response.status == .ok)
            #expect(server.requests.map(\.uri) == ["/moved", "/moved", "/target"])
            #expect(server.requests.last?.body == [4, 5, 6])
        }, cleanUp: {
            await session.shutdown()
            try? await server.shutdown()
        })
    }

    // MARK: URLs

    @Test func theServerURLsPathPrefixAndTheOperationsQueryAreKept() async throws {
        let server = try await LocalHTTPServer.start { _ in .json("{}") }
        let session = try CurlSession()
        try await ensuring({
            let transport = CurlewTransport(session)
            _ = try await transport.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/items?tag=a%20b&n=1"), body: nil,
                baseURL: URL(string: server.baseURL + "/api/v1/")!, operationID: "list")
            _ = try await transport.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/items"), body: nil,
                baseURL: URL(string: server.baseURL + "/api?ignored=1")!, operationID: "list")
            #expect(server.requests.map(\.uri) == ["/api/v1/items?tag=a%20b&n=1", "/api/items"])
            let error = await #expect(throws: CurlewError.self) {
                _ = try await transport.send(
                    HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/x"), body: nil,
                    baseURL: URL(string: "ftp://127.0.0.1")!, operationID: "list")
            }
            guard case .transport(let failure)? = error else {
                Issue.record("expected CurlewError.transport, got \(String(describing: error))")
                return
            }
            #expect(failure.code == .invalidURL)
        }, cleanUp: {
            await session.shutdown()
            try? await server.shutdown()
        })
    }
}
