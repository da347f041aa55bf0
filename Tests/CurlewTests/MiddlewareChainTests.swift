// Curlew — the middleware chain: its order among the plugins, what its members see, stubs and in-flight
// sharing as members, the chain without a provider and its escaping adapter.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

/// What a middleware was called with.
private struct Seen: Sendable {
    var request: TransportRequest
    var context: MiddlewareContext
}

/// Keeps what middleware were called with, in order.
private final class SeenLog: Sendable {
    private let entries = Locked<[Seen]>([])
    func add(_ seen: Seen) { entries.withLock { $0.append(seen) } }
    var all: [Seen] { entries.withLock { $0 } }
}

/// Records when the exchange enters it and leaves it (returning or throwing), and what it was called with.
private struct RecordingMiddleware: TransportMiddleware {
    let name: String
    let recorder: Recorder
    var seen = SeenLog()

    func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        recorder.add("\(name) in")
        seen.add(Seen(request: request, context: context))
        do throws(CurlewError) {
            let result = try await next(request, context, handler: handler)
            recorder.add("\(name) out")
            return result
        } catch {
            recorder.add("\(name) threw")
            throw error
        }
    }
}

/// Records the head the rest of the chain answered with, then hands it to the caller's handler.
private struct HeadWatcher: TransportMiddleware {
    let recorder: Recorder

    func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        try await next(request, context) { head, body throws(CurlewError) in
            recorder.add("head \(head.status.code) \(head.httpVersion.rawValue) \(head.effectiveURL)")
            return try await handler(head, body)
        }
    }
}

/// Answers from its own store without calling `next` (a cache).
private struct CacheMiddleware: TransportMiddleware {
    func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        let head = ResponseHead(
            status: .nonAuthoritativeInformation, headerFields: [.contentType: "text/plain", .age: "12"],
            effectiveURL: request.url)
        return try await handler(head, ResponseBodyStream(data: Data("from the cache".utf8)))
    }
}

/// Adds a header field to the request.
private struct HeaderMiddleware: TransportMiddleware {
    func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        var request = request
        request.headerFields.append(HTTPField(name: MiddlewareChainTests.middlewareField, value: "added"))
        return try await next(request, context, handler: handler)
    }
}

/// A middleware's own failure.
private struct Refusal: Error, Equatable {
    let reason: String
}

/// Fails before the exchange (`beforeSending`) or on a 503 head.
private struct RefusingMiddleware: TransportMiddleware {
    let beforeSending: Bool

    func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        if beforeSending { throw .underlying(Refusal(reason: "not today"), nil) }
        return try await next(request, context) { head, body throws(CurlewError) in
            if head.status.code == 503 { throw .underlying(Refusal(reason: "busy"), nil) }
            return try await handler(head, body)
        }
    }
}

/// Keeps every result a plugin's `didReceive` saw.
private final class ResultLog: Sendable {
    private let entries = Locked<[Result<ApiResponse, CurlewError>]>([])
    func add(_ result: Result<ApiResponse, CurlewError>) { entries.withLock { $0.append(result) } }
    var all: [Result<ApiResponse, CurlewError>] { entries.withLock { $0 } }
}

private struct CapturingPlugin: PluginType {
    let log: ResultLog
    func didReceive(_ result: Result<ApiResponse, CurlewError>, target: any TargetType) async { log.add(result) }
}

/// What a stream's handler throws.
private struct HandlerError: Error, Equatable {
    let id: Int
}

/// The body as UTF-8 text, read to its end inside a response handler.
private func text(of body: ResponseBodyStream) async throws(CurlewError) -> String {
    do throws(TransportError) {
        return String(decoding: try await body.collect(upTo: 10_000_000), as: UTF8.self)
    } catch {
        throw .transport(error)
    }
}

@Suite struct MiddlewareChainTests {
    static let middlewareField = HTTPField.Name("X-Middleware")!

    // MARK: - Order and context

    @Test func middlewareRunBetweenThePluginsStagesAndSeeTheirContext() async throws {
        let recorder = Recorder()
        let transport = MockTransport { _ throws(TransportError) in
            recorder.add("transport")
            return TransportResponse(status: .ok, body: Data("ok".utf8), httpVersion: .http1_1)
        }
        let outer = RecordingMiddleware(name: "middleware 1", recorder: recorder)
        let inner = RecordingMiddleware(name: "middleware 2", recorder: recorder)
        let provider = Provider<Local>(
            session: transport,
            plugins: [RecordingPlugin(name: "A", recorder: recorder), RecordingPlugin(name: "B", recorder: recorder)],
            middleware: [outer, inner])
        let target = Local(exampleAPI: "/echo", method: .get, task: .requestParameters(parameters: ["q": 1], encoding: URLEncoding.queryString))
        let response = try await provider.request(target)
        #expect(response.statusCode == 200)
        #expect(response.data.text == "ok")
        #expect(
            recorder.all == [
                "A.prepare", "B.prepare", "A.willSend", "B.willSend", "middleware 1 in", "middleware 2 in", "transport",
                "A.didReceive(200)", "B.didReceive(200)", "A.process", "B.process", "middleware 2 out", "middleware 1 out",
            ])
        for seen in [outer.seen.all, inner.seen.all] {
            #expect(seen.count == 1)
            let first = try #require(seen.first)
            #expect(first.context.attempt == 1)
            #expect(first.context.endpoint?.url == "https://api.example.com/echo")
            #expect(first.context.endpoint?.method == .get)
            let local = try #require(first.context.target as? Local)
            #expect(local.base == "https://api.example.com")
            #expect(local.path == "/echo")
            #expect(first.context.collectsBody)
            // The middleware see the request after the plugins' `prepare`.
            #expect(first.request.url == "https://api.example.com/echo?q=1")
            #expect(first.request.headerFields[HTTPField.Name("X-Plugin-A")!] == "yes")
            #expect(first.request.headerFields[HTTPField.Name("X-Plugin-B")!] == "yes")
        }
        #expect(transport.requests.map(\.url) == ["https://api.example.com/echo?q=1"])
    }

    // MARK: - Stubs through the chain

    @Test func aStubbedResponseGoesThroughTheMiddleware() async throws {
        let recorder = Recorder()
        let transport = MockTransport(replies: [])
        var target = Local(exampleAPI: "/stubbed")
        target.sampleData = Data("sample".utf8)
        let provider = Provider<Local>(
            endpointClosure: { target in
                Endpoint(
                    url: Endpoint.defaultURL(for: target), sampleResponseClosure: { .networkResponse(207, target.sampleData) },
                    method: target.method, task: target.task, httpHeaderFields: nil)
            },
            stubClosure: Provider.immediatelyStub, session: transport,
            middleware: [RecordingMiddleware(name: "m", recorder: recorder), HeadWatcher(recorder: recorder)])
        let response = try await provider.request(target)
        #expect(response.statusCode == 207)
        #expect(response.data.text == "sample")
        #expect(response.transportResponse == nil)
        #expect(recorder.all == ["m in", "head 207 none https://api.example.com/stubbed", "m out"])
        #expect(transport.requests.isEmpty)
    }

    @Test func aStubbedNetworkErrorReachesTheMiddlewareAndTheCaller() async throws {
        struct Offline: Error {}
        let recorder = Recorder()
        let transport = MockTransport(replies: [])
        let provider = Provider<Local>(
            endpointClosure: { target in
                Endpoint(
                    url: Endpoint.defaultURL(for: target), sampleResponseClosure: { .networkError(Offline()) },
                    method: target.method, task: target.task, httpHeaderFields: nil)
            },
            stubClosure: Provider.immediatelyStub, session: transport,
            middleware: [RecordingMiddleware(name: "m", recorder: recorder)])
        let error = await curlewError { try await provider.request(Local(exampleAPI: "/down")) }
        guard case .underlying(let underlying, nil) = error else {
            Issue.record("expected underlying, got \(String(describing: error))")
            return
        }
        #expect(underlying is Offline)
        #expect(recorder.all == ["m in", "m threw"])
        #expect(transport.requests.isEmpty)
    }

    @Test func cancellingADelayedStubInsideTheChain() async throws {
        let recorder = Recorder()
        let transport = MockTransport(replies: [])
        let provider = Provider<Local>(
            stubClosure: Provider.delayedStub(.seconds(30)), session: transport,
            middleware: [RecordingMiddleware(name: "m", recorder: recorder)])
        let task = Task { try await provider.request(Local(exampleAPI: "/slow")) }
        #expect(await eventually { recorder.all == ["m in"] })
        task.cancel()
        let error = await curlewError { try await task.value }
        #expect(error?.isCancellation == true)
        #expect(recorder.all == ["m in", "m threw"])
        #expect(transport.requests.isEmpty)
    }

    @Test func aMiddlewareMayAnswerWithoutSending() async throws {
        let transport = MockTransport(replies: [])
        let recorder = Recorder()
        let provider = Provider<Local>(
            session: transport, plugins: [RecordingPlugin(name: "P", recorder: recorder)], middleware: [CacheMiddleware()])
        let response = try await provider.request(Local(exampleAPI: "/cached"))
        #expect(response.statusCode == 203)
        #expect(response.data.text == "from the cache")
        #expect(response.headerFields[.age] == "12")
        #expect(response.headerFields[.contentType] == "text/plain")
        #expect(response.request?.url == "https://api.example.com/cached")
        #expect(recorder.all == ["P.prepare", "P.willSend", "P.didReceive(203)", "P.process"])
        #expect(transport.requests.isEmpty)
    }

    // MARK: - Failures and changes

    @Test func aMiddlewaresFailureFailsTheCallAndPluginsSeeIt() async throws {
        for beforeSending in [true, false] {
            let transport = MockTransport(replies: [.status(503, body: "busy")])
            let log = ResultLog()
            let provider = Provider<Local>(
                session: transport, plugins: [CapturingPlugin(log: log)], middleware: [RefusingMiddleware(beforeSending: beforeSending)])
            let error = await curlewError { try await provider.request(Local(exampleAPI: "/refused")) }
            let expected = Refusal(reason: beforeSending ? "not today" : "busy")
            guard case .underlying(let underlying, nil) = error else {
                Issue.record("expected underlying, got \(String(describing: error))")
                continue
            }
            #expect(underlying as? Refusal == expected)
            #expect(log.all.count == 1)
            guard case .failure(.underlying(let seen, nil))? = log.all.first else {
                Issue.record("didReceive saw \(String(describing: log.all.first))")
                continue
            }
            #expect(seen as? Refusal == expected)
            #expect(transport.requests.count == (beforeSending ? 0 : 1))
        }
    }

    @Test func aMiddlewareThatChangesTheRequestChangesWhatIsSent() async throws {
        let transport = MockTransport(replies: [.status(200)])
        let provider = Provider<Local>(session: transport, middleware: [HeaderMiddleware()])
        var target = Local(exampleAPI: "/changed")
        target.headers = ["X-Target": "t"]
        _ = try await provider.request(target)
        #expect(transport.requests.count == 1)
        let sent = try #require(transport.requests.first)
        #expect(sent.headerFields[values: Self.middlewareField] == ["added"])
        #expect(sent.headerFields[HTTPField.Name("X-Target")!] == "t")
    }

    // MARK: - In-flight sharing of identical exchanges only

    /// Holds every answer until `gate` opens, so the calls of a test overlap; `/r` redirects to `/item`.
    static func gated(_ gate: Gate) -> LocalHTTPServer.Handler {
        { request in
            await gate.wait()
            if request.path == "/r" { return .respond(status: 302, headers: [("Location", "/item")]) }
            return .text("item \(request.uri)")
        }
    }

    /// A request closure that hands the first request `first` and every later one `later`.
    static func alternating(
        first: @escaping @Sendable (inout TransportRequest) -> Void, later: @escaping @Sendable (inout TransportRequest) -> Void
    ) -> Provider<Local>.RequestClosure {
        let count = Locked(0)
        return { endpoint in
            var request = try endpoint.urlRequest()
            let number = count.withLock { count in
                count += 1
                return count
            }
            if number == 1 { first(&request) } else { later(&request) }
            return request
        }
    }

    @Test func identicalGETsShareOneExchange() async throws {
        let gate = Gate()
        try await withServer(Self.gated(gate)) { server, session in
            let entered = Recorder()
            let provider = Provider<Local>(
                session: session, middleware: [RecordingMiddleware(name: "m", recorder: entered)], trackInflights: true)
            let target = Local(server, "/item")
            let first = Task { try await provider.request(target).data.text }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            let second = Task { try await provider.request(target).data.text }
            #expect(await eventually { entered.all.count == 2 })
            // The first exchange is held open by the gate; a second caller that did not join it would
            // reach the server in this time.
            try await Task.sleep(for: .milliseconds(200))
            gate.open()
            let texts = [try await first.value, try await second.value]
            #expect(texts == ["item /item", "item /item"])
            #expect(server.statistics.requestsReceived == 1)
            #expect(await provider.inflightCount == 0)
        }
    }

    @Test func requestsThatDifferOnlyInTheirTimeoutAreNotShared() async throws {
        let gate = Gate()
        try await withServer(Self.gated(gate)) { server, session in
            let provider = Provider<Local>(
                requestClosure: Self.alternating(first: { $0.timeout = .seconds(30) }, later: { $0.timeout = .seconds(60) }),
                session: session, trackInflights: true)
            let target = Local(server, "/item")
            let first = Task { try await provider.request(target).data.text }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            let second = Task { try await provider.request(target).data.text }
            #expect(await eventually { server.statistics.requestsReceived == 2 })
            gate.open()
            let texts = [try await first.value, try await second.value]
            #expect(texts == ["item /item", "item /item"])
            #expect(server.statistics.requestsReceived == 2)
            #expect(await provider.inflightCount == 0)
        }
    }

    @Test func requestsThatDifferOnlyInTheirRedirectPolicyAreNotShared() async throws {
        let gate = Gate()
        try await withServer(Self.gated(gate)) { server, session in
            let provider = Provider<Local>(
                requestClosure: Self.alternating(first: { $0.redirectPolicy = .doNotFollow }, later: { _ in }),
                session: session, trackInflights: true)
            let target = Local(server, "/r")
            let stopping = Task { try await provider.request(target) }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            let following = Task { try await provider.request(target) }
            #expect(await eventually { server.statistics.requestsReceived == 2 })
            gate.open()
            let stopped = try await stopping.value
            #expect(stopped.statusCode == 302)
            #expect(stopped.headerFields[.location] == "/item")
            #expect(stopped.data.isEmpty)
            #expect(stopped.redirectChain.isEmpty)
            let followed = try await following.value
            #expect(followed.statusCode == 200)
            #expect(followed.data.text == "item /item")
            #expect(followed.finalURL == server.url("/item"))
            #expect(followed.redirectChain == [RedirectStep(url: server.url("/r"), status: .found)])
            #expect(server.requests.map(\.path) == ["/r", "/r", "/item"])
        }
    }

    @Test func requestsWithTheSameCustomRedirectPolicyAreShared() async throws {
        let gate = Gate()
        let policy = RedirectPolicy.custom { _ in .follow }
        try await withServer(Self.gated(gate)) { server, session in
            let entered = Recorder()
            let provider = Provider<Local>(
                requestClosure: Self.alternating(first: { $0.redirectPolicy = policy }, later: { $0.redirectPolicy = policy }),
                session: session, middleware: [RecordingMiddleware(name: "m", recorder: entered)], trackInflights: true)
            let target = Local(server, "/r")
            let first = Task { try await provider.request(target) }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            let second = Task { try await provider.request(target) }
            #expect(await eventually { entered.all.count == 2 })
            try await Task.sleep(for: .milliseconds(200))
            gate.open()
            for response in [try await first.value, try await second.value] {
                #expect(response.statusCode == 200)
                #expect(response.data.text == "item /item")
                #expect(response.redirectChain == [RedirectStep(url: server.url("/r"), status: .found)])
            }
            #expect(server.requests.map(\.path) == ["/r", "/item"])
        }
    }

    @Test func requestsWithDifferentCustomRedirectPolicyInstancesAreNotShared() async throws {
        let gate = Gate()
        let one = RedirectPolicy.custom { _ in .follow }
        let other = RedirectPolicy.custom { _ in .follow }
        try await withServer(Self.gated(gate)) { server, session in
            let provider = Provider<Local>(
                requestClosure: Self.alternating(first: { $0.redirectPolicy = one }, later: { $0.redirectPolicy = other }),
                session: session, trackInflights: true)
            let target = Local(server, "/r")
            let first = Task { try await provider.request(target) }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            let second = Task { try await provider.request(target) }
            #expect(await eventually { server.statistics.requestsReceived == 2 })
            gate.open()
            for response in [try await first.value, try await second.value] {
                #expect(response.statusCode == 200)
                #expect(response.data.text == "item /item")
            }
            #expect(server.requests.map(\.path).sorted() == ["/item", "/item", "/r", "/r"])
        }
    }

    @Test func stubbedAndRealRequestsAreNotShared() async throws {
        let gate = Gate()
        try await withServer(Self.gated(gate)) { server, session in
            // Identical requests; the target's sample data (which is not sent) decides whether it is stubbed.
            let provider = Provider<Local>(
                stubClosure: { target in target.sampleData.isEmpty ? .never : .immediate }, session: session,
                trackInflights: true)
            let real = Local(server, "/item")
            var stubbed = real
            stubbed.sampleData = Data("stub".utf8)

            // A stubbed request while the real one is in flight answers at once, with its sample.
            let realCall = Task { try await provider.request(real).data.text }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            let answered = Recorder()
            let stubCall = Task {
                let text = try await provider.request(stubbed).data.text
                answered.add(text)
                return text
            }
            #expect(await eventually { answered.all == ["stub"] })
            gate.open()
            let stubText = try await stubCall.value
            #expect(stubText == "stub")
            let realText = try await realCall.value
            #expect(realText == "item /item")
            #expect(server.statistics.requestsReceived == 1)
        }
    }

    @Test func aRealRequestDoesNotJoinADelayedStub() async throws {
        let gate = Gate()
        try await withServer(Self.gated(gate)) { server, session in
            let entered = Recorder()
            let provider = Provider<Local>(
                stubClosure: { target in target.sampleData.isEmpty ? .never : .delayed(.seconds(30)) }, session: session,
                middleware: [RecordingMiddleware(name: "m", recorder: entered)], trackInflights: true)
            let real = Local(server, "/item")
            var stubbed = real
            stubbed.sampleData = Data("stub".utf8)
            let stubCall = Task { try await provider.request(stubbed) }
            #expect(await eventually { entered.all == ["m in"] })
            try await Task.sleep(for: .milliseconds(200))
            let realCall = Task { try await provider.request(real).data.text }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            gate.open()
            let realText = try await realCall.value
            #expect(realText == "item /item")
            stubCall.cancel()
            #expect(await curlewError { try await stubCall.value }?.isCancellation == true)
            #expect(server.statistics.requestsReceived == 1)
        }
    }

    @Test func streamedCallsNeverShare() async throws {
        let gate = Gate()
        try await withServer(Self.gated(gate)) { server, session in
            let provider = Provider<Local>(session: session, trackInflights: true)
            let target = Local(server, "/item")
            @Sendable func streamed() async throws -> String {
                try await provider.stream(target) { response, body in
                    "\(response.statusCode) " + String(decoding: try await body.collect(upTo: 1000), as: UTF8.self)
                }
            }
            let first = Task { try await streamed() }
            let second = Task { try await streamed() }
            #expect(await eventually { server.statistics.requestsReceived == 2 })
            gate.open()
            let texts = [try await first.value, try await second.value]
            #expect(texts == ["200 item /item", "200 item /item"])
            #expect(server.statistics.requestsReceived == 2)
            #expect(await provider.inflightCount == 0)
        }
    }

    // MARK: - The chain without a provider

    @Test func performHandsTheHandlerTheResponseThroughTheMiddleware() async throws {
        try await withServer({ request in .text("hello \(request.uri)", headers: [("X-Served", "1")]) }) { server, session in
            let recorder = Recorder()
            let recording = RecordingMiddleware(name: "m", recorder: recorder)
            let chain = MiddlewareChain([recording, HeaderMiddleware()], transport: session)
            let served = HTTPField.Name("X-Served")!
            let (status, servedBy, bodyText) = try await chain.perform(
                TransportRequest(url: server.url("/p")), context: MiddlewareContext(attempt: 3)
            ) { head, body throws(CurlewError) -> (Int, String?, String) in
                (head.status.code, head.headerFields[served], try await text(of: body))
            }
            #expect(status == 200)
            #expect(servedBy == "1")
            #expect(bodyText == "hello /p")
            #expect(recorder.all == ["m in", "m out"])
            let seen = try #require(recording.seen.all.first)
            #expect(seen.context.attempt == 3)
            #expect(seen.context.target == nil)
            #expect(seen.context.endpoint == nil)
            #expect(!seen.context.collectsBody)
            #expect(server.requests.map { $0.header("X-Middleware") } == ["added"])
        }
    }

    @Test func responseForCollectsTheWholeResponse() async throws {
        try await withServer({ request in .text("hello \(request.uri)") }) { server, session in
            let recorder = Recorder()
            let recording = RecordingMiddleware(name: "m", recorder: recorder)
            let chain = MiddlewareChain([recording], transport: session)
            let response = try await chain.response(for: TransportRequest(url: server.url("/q")))
            #expect(response.status == .ok)
            #expect(response.body.text == "hello /q")
            #expect(response.headerFields[.contentType] == "text/plain; charset=utf-8")
            #expect(response.httpVersion == .http1_1)
            #expect(response.effectiveURL == server.url("/q"))
            #expect(recorder.all == ["m in", "m out"])
            #expect(recording.seen.all.first?.context.collectsBody == true)
            #expect(recording.seen.all.first?.context.attempt == 1)
            #expect(server.statistics.requestsReceived == 1)
        }
    }

    @Test func sendReturnsTheHeadAndABodyReadLaterElsewhere() async throws {
        let payload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        var reply = Array("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n\r\n".utf8)
        for start in stride(from: 0, to: payload.count, by: 10_000) {
            let chunk = payload[start..<min(start + 10_000, payload.count)]
            reply += Array(String(chunk.count, radix: 16).utf8) + [13, 10] + chunk + [13, 10]
        }
        reply += Array("0\r\nX-Checksum: abc123\r\n\r\n".utf8)
        try await withServer({ [reply] _ in .raw(reply, after: .keepOpen) }) { server, session in
            let recorder = Recorder()
            let chain = MiddlewareChain([RecordingMiddleware(name: "m", recorder: recorder)], transport: session)
            let (head, body) = try await chain.send(TransportRequest(url: server.url("/t")))
            #expect(head.status == .ok)
            #expect(head.headerFields[.contentType] == "application/octet-stream")
            #expect(head.httpVersion == .http1_1)
            #expect(body.trailerFields == nil)
            #expect(body.expectedLength == nil)
            // The middleware's part ended with the head, as an OpenAPI middleware's does: the body is detached.
            #expect(recorder.all == ["m in", "m out"])
            let reader = Task {
                var bytes: [UInt8] = []
                for try await chunk in body { bytes += chunk }
                return bytes
            }
            let bytes = try await reader.value
            #expect(bytes.count == payload.count)
            #expect(bytes == payload)
            let checksum = HTTPField.Name("X-Checksum")!
            #expect(body.trailerFields.map { Array($0) } == [HTTPField(name: checksum, value: "abc123")])
            #expect(server.statistics.requestsReceived == 1)
        }
    }

    @Test func droppingTheEscapingBodyEndsTheExchange() async throws {
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\n".utf8) + Array(repeating: UInt8(ascii: "x"), count: 1000)
        try await withServer({ _ in .raw(head, after: .keepOpen) }) { server, session in
            let chain = MiddlewareChain([], transport: session)
            do {
                let (head, body) = try await chain.send(TransportRequest(url: server.url("/big")))
                #expect(head.status == .ok)
                #expect(head.headerFields[.contentLength] == "10000000")
                var chunks = body.makeAsyncIterator()
                let first = try await chunks.next()
                #expect(first.map { !$0.isEmpty && $0.count <= 1000 && $0.allSatisfy { $0 == UInt8(ascii: "x") } } == true)
            }
            // The body and its iterator are gone: the exchange is aborted and its connection closed.
            #expect(await eventually { server.statistics.connectionsClosed == 1 })
            #expect(await eventually { session.statistics.activeTransfers == 0 })
        }
    }

    @Test func droppingTheEscapingBodyUnreadEndsTheExchange() async throws {
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\n".utf8) + Array(repeating: UInt8(ascii: "x"), count: 1000)
        try await withServer({ _ in .raw(head, after: .keepOpen) }) { server, session in
            let chain = MiddlewareChain([], transport: session)
            do {
                let (head, _) = try await chain.send(TransportRequest(url: server.url("/big")))
                #expect(head.status == .ok)
            }
            #expect(await eventually { server.statistics.connectionsClosed == 1 })
            #expect(await eventually { session.statistics.activeTransfers == 0 })
        }
    }

    // MARK: - Streams

    @Test(arguments: [false, true])
    func aStreamHandlersOwnErrorIsThrownAsItIsThroughTheChain(stubbed: Bool) async throws {
        let recorder = Recorder()
        let transport = MockTransport(replies: [.status(200, body: "abc")])
        var target = Local(exampleAPI: "/s")
        target.sampleData = Data("sample".utf8)
        let provider = Provider<Local>(
            stubClosure: stubbed ? Provider.immediatelyStub : Provider.neverStub, session: transport,
            plugins: [RecordingPlugin(name: "P", recorder: recorder)],
            middleware: [RecordingMiddleware(name: "m", recorder: recorder)])
        let ran = Recorder()
        do {
            _ = try await provider.stream(target) { response, body in
                ran.add("\(response.statusCode)")
                throw HandlerError(id: 7)
            }
            Issue.record("the stream did not throw")
        } catch {
            #expect(error as? HandlerError == HandlerError(id: 7))
        }
        #expect(ran.all == ["200"])
        #expect(recorder.all == ["P.prepare", "P.willSend", "m in", "P.didReceive(200)", "P.process", "m threw"])
        #expect(transport.requests.count == (stubbed ? 0 : 1))
    }
}
