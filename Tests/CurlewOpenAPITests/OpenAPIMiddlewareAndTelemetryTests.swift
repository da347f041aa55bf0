// Curlew — the operation id in Curlew's log lines, metrics and spans, Curlew's counters for a generated
// client's calls, and OpenAPI ClientMiddleware run inside Curlew's chain (bodies handed on unchanged or
// read, calls answered without the network). Real servers on loopback; no test measures time.

import Curlew
import CurlewEngine
import CurlewOpenAPI
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import InMemoryTracing
import Logging
import MetricsTestKit
import OpenAPIFixture
import OpenAPIRuntime
import Testing
import Tracing

/// An OpenAPI middleware that records what it is given, reads the body to sign it with its length, and
/// marks the response it returns.
private struct Signer: ClientMiddleware {
    struct Seen: Sendable, Equatable {
        let operationID: String
        let baseURL: String
        let path: String?
        let bodyLength: Int?
    }

    let seen = Locked<[Seen]>([])

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        var forwarded = body
        var length: Int?
        if let body {
            let bytes = try await [UInt8](collecting: body, upTo: 10_000_000)
            length = bytes.count
            request.headerFields[HTTPField.Name("X-Signature")!] = "len=\(bytes.count)"
            // A body iterated once cannot be handed on after reading it; one that can, is.
            forwarded = body.iterationBehavior == .multiple ? body : HTTPBody(bytes)
        }
        seen.withLock {
            $0.append(Seen(operationID: operationID, baseURL: baseURL.absoluteString, path: request.path, bodyLength: length))
        }
        var (response, responseBody) = try await next(request, forwarded, baseURL)
        response.headerFields[HTTPField.Name("X-Signed")!] = "yes"
        return (response, responseBody)
    }
}

/// An OpenAPI middleware that answers without calling `next`.
private struct CannedAnswer: ClientMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), HTTPBody(#"{"message": "canned"}"#))
    }
}

@Suite(.timeLimit(.minutes(2))) struct OpenAPIMiddlewareAndTelemetryTests {
    // MARK: Telemetry

    @Test func theOperationIDNamesTheCallInLogsMetricsAndSpans() async throws {
        let metrics = TestMetrics()
        let tracer = InMemoryTracer()
        var session = SessionConfiguration()
        session.telemetry = Telemetry(metricsFactory: metrics, tracer: tracer)
        session.telemetry.recordsMetrics = true
        session.telemetry.recordsSpans = true
        let log = RecordingLogHandler()
        let transport = CurlewTransport.Configuration(logger: Logger(label: "test") { _ in log })
        try await withClient(session: session, transport: transport) { fixture in
            let greeting = try await fixture.client.getGreeting(query: .init(name: "Ada")).ok.body.json
            #expect(greeting.message == "Hello, Ada!")
            let spans = tracer.finishedSpans.filter { $0.kind == .client }
            #expect(spans.count == 1)
            #expect(spans.first?.attributes["curlew.operation"]?.toSpanAttribute() == .string("getGreeting"))
            let durations = metrics.timers(
                label: ClientMetricNames.requestDuration, dimensions: [("curlew.operation", "getGreeting")])
            #expect(durations.count == 1)
            #expect(durations.first?.values.count == 1)
            #expect(durations.first?.dimensions.contains { $0 == ("http.response.status_code", "200") } == true)
            let lines = log.all.map(\.metadata).filter { $0["curlew.operation"] == "getGreeting" }
            #expect(!lines.isEmpty)
            #expect(lines.allSatisfy { $0["http.request.method"] == "GET" && $0["curlew.request.id"] != nil })
        }
    }

    @Test func retriesOfAGeneratedCallAreCountedAndEachAttemptIsNamed() async throws {
        let metrics = TestMetrics()
        var session = SessionConfiguration()
        session.telemetry = Telemetry(metricsFactory: metrics)
        session.telemetry.recordsMetrics = true
        try await withClient(session: session, middleware: [CurlewTransportTests.retry()]) { fixture in
            let key = UUID().uuidString
            let result = try await fixture.client.flaky(query: .init(key: key, failures: 2), body: .binary(HTTPBody([1, 2, 3])))
            #expect(try result.ok.body.json == .init(attempts: 3, bytes: 3))
            let retries = try metrics.expectCounter(
                ClientMetricNames.retries,
                [("server.address", "127.0.0.1"), ("server.port", String(fixture.server.port))])
            #expect(retries.totalValue == 2)
            let statuses = metrics.timers(label: ClientMetricNames.requestDuration, dimensions: [("curlew.operation", "flaky")])
                .flatMap { timer in timer.dimensions.filter { $0.0 == "http.response.status_code" }.map { ($0.1, timer.values.count) } }
            #expect(Dictionary(statuses, uniquingKeysWith: +) == ["503": 2, "200": 1])
        }
    }

    // MARK: OpenAPI middleware in Curlew's chain

    @Test func anOpenAPIMiddlewareRunsForEveryAttemptInsideCurlewsRetry() async throws {
        let signer = Signer()
        try await withClient(middleware: [CurlewTransportTests.retry(), OpenAPIMiddleware(signer)]) { fixture in
            let key = UUID().uuidString
            let body = sampleBytes(1000)
            let result = try await fixture.client.flaky(query: .init(key: key, failures: 1), body: .binary(HTTPBody(body)))
            #expect(try result.ok.body.json == .init(attempts: 2, bytes: 1000))
            let expected = Signer.Seen(
                operationID: "flaky", baseURL: fixture.server.baseURL, path: "/flaky?key=\(key)&failures=1", bodyLength: 1000)
            #expect(signer.seen.withLock { $0 } == [expected, expected])
            // What the middleware made of the response reaches the caller.
            let (response, _) = try await fixture.transport.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/greet"), body: nil,
                baseURL: fixture.server.serverURL, operationID: "getGreeting")
            #expect(response.headerFields[HTTPField.Name("X-Signed")!] == "yes")
        }
    }

    @Test func anOpenAPIMiddlewareInAChainSendsWhatItHandsOn() async throws {
        let server = try await LocalHTTPServer.start { request in .text("\(request.body.count)") }
        let session = try CurlSession()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-openapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try await ensuring({
            let signer = Signer()
            let chain = MiddlewareChain([OpenAPIMiddleware(signer)], transport: session)
            // A file: read by the middleware, then sent as the file it is.
            let file = directory.appendingPathComponent("upload.bin")
            let bytes = sampleBytes(70_000, seed: 9)
            try Data(bytes).write(to: file)
            var request = TransportRequest(url: server.url("/upload?x=1"), method: .put, body: try .file(file.path))
            request.call = CallContext(logger: Logger(label: "test"), operation: "putFile")
            let response = try await chain.response(for: request)
            #expect(response.status.code == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "70000")
            #expect(response.headerFields[HTTPField.Name("X-Signed")!] == "yes")
            // A stream read once: the bytes the middleware read are what is sent.
            let chunks = AsyncStream<[UInt8]> { continuation in
                continuation.yield(Array("stream".utf8))
                continuation.yield(Array("ed".utf8))
                continuation.finish()
            }
            _ = try await chain.response(
                for: TransportRequest(url: server.url("/s"), method: .post, body: .sequence(chunks, length: 8)))
            #expect(server.requests.map(\.uri) == ["/upload?x=1", "/s"])
            #expect(server.requests.map { $0.header("X-Signature") } == ["len=70000", "len=8"])
            #expect(server.requests.first?.body == bytes)
            #expect(server.requests.last?.bodyText == "streamed")
            #expect(
                signer.seen.withLock { $0 } == [
                    .init(operationID: "putFile", baseURL: server.baseURL, path: "/upload?x=1", bodyLength: 70_000),
                    .init(operationID: "", baseURL: server.baseURL, path: "/s", bodyLength: 8),
                ])
        }, cleanUp: {
            await session.shutdown()
            try? await server.shutdown()
            try? FileManager.default.removeItem(at: directory)
        })
    }

    @Test func anOpenAPIMiddlewareMayAnswerWithoutTheNetwork() async throws {
        try await withClient(middleware: [OpenAPIMiddleware(CannedAnswer())]) { fixture in
            let greeting = try await fixture.client.getGreeting().ok.body.json
            #expect(greeting.message == "canned")
            #expect(fixture.session.statistics.completedTransfers == 0)
            #expect(fixture.session.statistics.connectionsOpened == 0)
        }
    }
}
