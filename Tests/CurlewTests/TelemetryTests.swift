// Curlew — metrics, spans, trace context and per-request log lines against real servers on loopback:
// names, units, attributes and values as recorded by swift-metrics' TestMetrics and an in-memory tracer
// given to each session (tests run in parallel; nothing is bootstrapped), `traceparent` as the server
// received it. No test measures time.

@testable import Curlew
@testable import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import InMemoryTracing
import Logging
import MetricsTestKit
import Testing
import Tracing
import W3CTraceContext

/// A tracer that records spans in memory and sends W3C `traceparent` for them.
struct W3CTestTracer: Tracer {
    let inner = InMemoryTracer(
        idGenerator: .init(nextTraceID: { TraceID.random().description }, nextSpanID: { SpanID.random().description }))

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        inner.startSpan(
            operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func activeSpan(identifiedBy context: ServiceContext) -> InMemorySpan? { inner.activeSpan(identifiedBy: context) }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}
}

@Suite(.timeLimit(.minutes(2))) struct TelemetryTests {
    static func configuration(metrics: TestMetrics? = nil, tracer: (any Tracer)? = nil) -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.telemetry = Telemetry(metricsFactory: metrics, tracer: tracer)
        configuration.telemetry.recordsMetrics = metrics != nil
        configuration.telemetry.recordsSpans = tracer != nil
        return configuration
    }

    static func dimensions(_ port: Int, status: Int?, error: String? = nil, version: String? = "1.1") -> [(String, String)] {
        var dimensions = [("http.request.method", "GET"), ("server.address", "127.0.0.1"), ("server.port", String(port))]
        if let status { dimensions.append(("http.response.status_code", String(status))) }
        if let error { dimensions.append(("error.type", error)) }
        if let version { dimensions.append(("network.protocol.version", version)) }
        dimensions.append(("url.scheme", "http"))
        return dimensions
    }

    // MARK: Metrics

    @Test func aRequestRecordsOTelClientMetrics() async throws {
        let metrics = TestMetrics()
        try await withServerAndSession(configuration: Self.configuration(metrics: metrics), handler: { _ in .text("hello") }) {
            server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/a?token=secret")))
            #expect(response.status.code == 200)
            let port = server.port
            let duration = try metrics.expectTimer(ClientMetricNames.requestDuration, Self.dimensions(port, status: 200))
            #expect(duration.values.count == 1)
            let body = try metrics.expectRecorder(ClientMetricNames.responseBodySize, Self.dimensions(port, status: 200))
            #expect(body.values == [5])
            let active = try metrics.expectMeter(
                ClientMetricNames.activeRequests,
                [("http.request.method", "GET"), ("server.address", "127.0.0.1"), ("server.port", String(port)), ("url.scheme", "http")])
            #expect(active.values == [1, 0])
            let connect = try metrics.expectTimer(
                ClientMetricNames.phaseDuration, Self.dimensions(port, status: 200) + [("curlew.phase", "connect")])
            #expect(connect.values.count == 1)
            let firstByte = try metrics.expectTimer(
                ClientMetricNames.phaseDuration, Self.dimensions(port, status: 200) + [("curlew.phase", "first_byte")])
            #expect(firstByte.values.count == 1)
            // Nothing names the path or the query.
            for timer in metrics.timers {
                #expect(!timer.dimensions.contains { $0.1.contains("/a") || $0.1.contains("secret") })
            }
            // A request body's size: the second request, on the same connection.
            _ = try await session.execute(TransportRequest(url: server.url("/b"), method: .post, body: .bytes(Array("12345678".utf8))))
            var post = Self.dimensions(port, status: 200)
            post[0] = ("http.request.method", "POST")
            let sent = try metrics.expectRecorder(ClientMetricNames.requestBodySize, post)
            #expect(sent.values == [8])
            // A reused connection has no connect phase of its own.
            let postConnect = metrics.timers(
                label: ClientMetricNames.phaseDuration, dimensions: [("http.request.method", "POST"), ("curlew.phase", "connect")])
            #expect(postConnect.flatMap(\.values).isEmpty)
            #expect(post.count == 6)
        }
    }

    @Test func aStatusOf400OrMoreIsTheErrorType() async throws {
        let metrics = TestMetrics()
        try await withServerAndSession(
            configuration: Self.configuration(metrics: metrics), handler: { _ in .text("gone", status: 404) }
        ) { server, session in
            _ = try await session.execute(TransportRequest(url: server.url("/missing")))
            let duration = try metrics.expectTimer(
                ClientMetricNames.requestDuration, Self.dimensions(server.port, status: 404, error: "404"))
            #expect(duration.values.count == 1)
        }
    }

    @Test func aTransportFailureIsTheErrorTypeWithNoStatus() async throws {
        let metrics = TestMetrics()
        // A port nothing listens on: a server started and stopped.
        let closed = try await LocalHTTPServer.start { _ in .text("unused") }
        let port = closed.port
        try await closed.shutdown()
        let session = try CurlSession(configuration: Self.configuration(metrics: metrics))
        await #expect(throws: TransportError.self) {
            _ = try await session.execute(TransportRequest(url: "http://127.0.0.1:\(port)/"))
        }
        await session.shutdown()
        let duration = try metrics.expectTimer(
            ClientMetricNames.requestDuration, Self.dimensions(port, status: nil, error: "cannotConnect", version: nil))
        #expect(duration.values.count == 1)
    }

    @Test func connectionsAreCountedOpenAndTheirDurationRecordedWhenClosed() async throws {
        let metrics = TestMetrics()
        let server = try await LocalHTTPServer.start { _ in .text("ok") }
        let session = try CurlSession(configuration: Self.configuration(metrics: metrics))
        _ = try await session.execute(TransportRequest(url: server.url("/")))
        let dimensions = [("server.address", "127.0.0.1"), ("server.port", String(server.port)), ("url.scheme", "http")]
        let active = try metrics.expectMeter(ClientMetricNames.openConnections, dimensions + [("http.connection.state", "active")])
        let idle = try metrics.expectMeter(ClientMetricNames.openConnections, dimensions + [("http.connection.state", "idle")])
        // Opened for the transfer (active), then kept idle once it ended.
        #expect(active.lastValue == 0)
        #expect(idle.lastValue == 1)
        #expect(active.values.contains(1))
        await session.shutdown()
        try await server.shutdown()
        #expect(idle.lastValue == 0)
        let lifetime = try metrics.expectTimer(ClientMetricNames.connectionDuration, dimensions)
        #expect(lifetime.values.count == 1)
    }

    @Test func nothingBootstrappedMeansNoObserver() throws {
        let session = try CurlSession()
        defer { session.syncShutdown() }
        // The tests' process bootstraps neither metrics nor tracing.
        #expect(session.hopObserver == nil)
        #expect(session.clientMetrics == nil)
    }

    // MARK: Spans and trace context

    @Test func eachRedirectHopHasItsOwnSpanAndTraceparent() async throws {
        let tracer = W3CTestTracer()
        let handler: LocalHTTPServer.Handler = { request in
            request.path == "/from" ? .respond(status: 302, headers: [("Location", "/to?key=value")]) : .text("arrived")
        }
        try await withServerAndSession(configuration: Self.configuration(tracer: tracer), handler: handler) { server, session in
            let parent = tracer.startSpan("caller")
            var context = ServiceContext.topLevel
            context = parent.context
            let response = try await ServiceContext.withValue(context) {
                try await session.execute(TransportRequest(url: server.url("/from?token=secret").replacingOccurrences(of: "http://", with: "http://user:pw@")))
            }
            parent.end()
            #expect(response.status.code == 200)
            let spans = tracer.inner.finishedSpans.filter { $0.kind == .client }
            try #require(spans.count == 2)
            let parentContext = try #require(parent.context.inMemorySpanContext)
            for span in spans {
                #expect(span.operationName == "GET")
                #expect(span.spanContext.traceID == parentContext.traceID)
                #expect(span.spanContext.parentSpanID == parentContext.spanID)
            }
            #expect(spans[0].attributes["url.full"]?.toSpanAttribute() == .string("http://127.0.0.1:\(server.port)/from?token=REDACTED"))
            #expect(spans[1].attributes["url.full"]?.toSpanAttribute() == .string("http://127.0.0.1:\(server.port)/to?key=REDACTED"))
            #expect(spans[0].attributes["http.response.status_code"]?.toSpanAttribute() == .int64(302))
            #expect(spans[1].attributes["http.response.status_code"]?.toSpanAttribute() == .int64(200))
            #expect(spans[0].attributes["http.request.resend_count"] == nil)
            #expect(spans[1].attributes["http.request.resend_count"]?.toSpanAttribute() == .int64(1))
            #expect(spans[1].attributes["network.protocol.version"]?.toSpanAttribute() == .string("1.1"))
            // The server saw each hop with its own span's id, parsed by the W3C library.
            let sent = try server.requests.map { request in
                try TraceContext(traceParentHeaderValue: try #require(request.header("traceparent")))
            }
            #expect(sent.map(\.spanID.description) == spans.map(\.spanContext.spanID))
            #expect(sent.map(\.traceID.description) == [parentContext.traceID, parentContext.traceID])
            // The phases, stamped within the span.
            let names = spans[0].events.map(\.name)
            #expect(names.contains("curlew.connect"))
            #expect(names.contains("curlew.first_byte"))
            for event in spans[0].events {
                #expect(event.nanosecondsSinceEpoch >= spans[0].startInstant.nanosecondsSinceEpoch)
                #expect(event.nanosecondsSinceEpoch <= spans[0].endInstant.nanosecondsSinceEpoch)
            }
        }
    }

    @Test func aFailedHopEndsItsSpanWithTheErrorType() async throws {
        let tracer = W3CTestTracer()
        try await withServerAndSession(configuration: Self.configuration(tracer: tracer), handler: { _ in .raw(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8), after: .close) }) {
            server, session in
            await #expect(throws: TransportError.self) { _ = try await session.execute(TransportRequest(url: server.url("/"))) }
            let span = try #require(tracer.inner.finishedSpans.first)
            #expect(span.status?.code == .error)
            let errorType = span.attributes["error.type"]?.toSpanAttribute()
            #expect(errorType != nil)
            #expect(errorType != .string("200"))
        }
    }

    @Test func aStreamedResponseEndsItsSpanWhenItsBodyEnds() async throws {
        let tracer = W3CTestTracer()
        let metrics = TestMetrics()
        try await withServerAndSession(
            configuration: Self.configuration(metrics: metrics, tracer: tracer), handler: { _ in .text(String(repeating: "x", count: 1000)) }
        ) { server, session in
            let count = try await session.perform(TransportRequest(url: server.url("/s"))) { head, body in
                var bytes = 0
                for try await chunk in body { bytes += chunk.count }
                return bytes
            }
            #expect(count == 1000)
            let size = try metrics.expectRecorder(ClientMetricNames.responseBodySize, Self.dimensions(server.port, status: 200))
            #expect(size.values == [1000])
            let span = try #require(tracer.inner.finishedSpans.first)
            #expect(span.attributes["http.response.body.size"]?.toSpanAttribute() == .int64(1000))
        }
    }

    // MARK: The provider: attempts, counters, the request's logger

    @Test func eachRetryIsASpanWithItsResendCountAndTheRetryIsCounted() async throws {
        let tracer = W3CTestTracer()
        let metrics = TestMetrics()
        let counter = Locked(0)
        let handler: LocalHTTPServer.Handler = { _ in
            counter.withLock { $0 += 1; return $0 } == 1 ? .text("busy", status: 503) : .text("ok")
        }
        let recording = RecordingLogHandler()
        try await withServerAndSession(configuration: Self.configuration(metrics: metrics, tracer: tracer), handler: handler) {
            server, session in
            let provider = Provider<Local>(
                session: session,
                middleware: [RetryMiddleware(policy: .default, clock: TestClock(), random: { 0.5 })],
                logger: Logger(label: "test") { _ in recording })
            let response = try await provider.request(
                Local(server, "/retry", task: .requestParameters(parameters: ["api_key": "k"], encoding: URLEncoding.queryString)))
            #expect(response.statusCode == 200)
            let spans = tracer.inner.finishedSpans.filter { $0.kind == .client }
            try #require(spans.count == 2)
            #expect(spans[0].attributes["http.request.resend_count"] == nil)
            #expect(spans[1].attributes["http.request.resend_count"]?.toSpanAttribute() == .int64(1))
            #expect(spans[0].attributes["error.type"]?.toSpanAttribute() == .string("503"))
            let retries = try metrics.expectCounter(
                ClientMetricNames.retries, [("server.address", "127.0.0.1"), ("server.port", String(server.port))])
            #expect(retries.totalValue == 1)
            // Both attempts' engine lines and the retry's line carry the call's id; no query value anywhere.
            let lines = recording.all
            let sending = lines.filter { $0.message == "sending request" }
            #expect(sending.count == 2)
            let ids = Set(lines.compactMap { $0.metadata["curlew.request.id"] })
            #expect(ids.count == 1)
            #expect(sending.map { $0.metadata["http.request.resend_count"] } == ["0", "1"])
            #expect(lines.contains { $0.message.hasPrefix("retrying") && $0.metadata["curlew.request.id"] == ids.first })
            #expect(lines.allSatisfy { line in !line.metadata.values.contains { $0.contains("api_key=k") } })
            #expect(sending.first?.metadata["url.full"] == "http://127.0.0.1:\(server.port)/retry?api_key=REDACTED")
        }
    }

    // MARK: Redaction

    @Test(arguments: [
        ("https://user:p%40ss@example.com:8443/a/b?token=abc&x=1#frag", "https://example.com:8443/a/b?token=REDACTED&x=REDACTED"),
        ("http://example.com/plain", "http://example.com/plain"),
        ("http://example.com/?flag&k=", "http://example.com/?flag&k=REDACTED"),
        ("http://a@b@example.com/", "http://example.com/"),
    ])
    func urlFullHasNoUserInformationAndNoQueryValues(url: String, expected: String) {
        #expect(RedactedURL.full(url) == expected)
    }

    @Test(arguments: [
        ("https://example.com/x", "example.com", 443),
        ("http://Example.com:8080/x?y", "example.com", 8080),
        ("http://u:p@[::1]:9000/", "::1", 9000),
        ("http://[::1]/", "::1", 80),
    ])
    func theServerOfAURLCountedFor(url: String, host: String, port: Int) throws {
        let metrics = TestMetrics()
        let session = try CurlSession(configuration: Self.configuration(metrics: metrics))
        defer { session.syncShutdown() }
        // Parsed as the session parses every URL (libcurl's parser, the scheme's default port).
        session.clientMetrics?.count(ClientMetricNames.retries, url: url)
        let counter = try metrics.expectCounter(
            ClientMetricNames.retries, [("server.address", host), ("server.port", String(port))])
        #expect(counter.totalValue == 1)
    }
}
