// Curlew — a target's server-sent events through the provider, over real connections (sse_server.py on
// loopback): every attempt through the plugins and the chain, typed events decoded with the provider's
// decoder, reconnect targets, stubs, and a RetryMiddleware that leaves reconnections to the stream.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// `/sse` of an ``SSETestServer`` as a target: the key and plan in the query (with `query` added), an
/// optional body.
private struct EventsTarget: TargetType {
    var base: String
    var key: String
    var plan: SSEPlan
    var query: [String: String] = [:]
    var method: HTTPRequest.Method = .get
    var body: Data?
    var headers: [String: String]? = nil
    var sampleData = Data()

    init(_ server: SSETestServer, key: String, plan: SSEPlan, query: [String: String] = [:]) {
        base = server.url("/")
        self.key = key
        self.plan = plan
        self.query = query
    }

    /// A target that is never sent (stubs): its base URL has no server.
    init(sampleData: String) {
        base = "http://127.0.0.1:9/"
        key = ""
        plan = SSEPlan([])
        self.sampleData = Data(sampleData.utf8)
    }

    var baseURL: URL { URL(string: base) ?? URL(fileURLWithPath: "/") }
    var path: String { "/sse" }

    var task: RequestTask {
        var parameters: [String: JSONValue] = ["key": .string(key), "plan": .string(plan.encoded)]
        for (name, value) in query { parameters[name] = .string(value) }
        if let body { return .requestCompositeData(bodyData: body, urlParameters: parameters) }
        return .requestParameters(parameters: parameters, encoding: URLEncoding.queryString)
    }
}

/// What plugins saw, per stage, in order.
private final class AttemptLog: Sendable {
    struct Sent: Sendable, Equatable {
        var method: String
        var lastEventID: String?
        var accept: String?
        var cacheControl: String?
    }

    struct Received: Sendable, Equatable {
        var status: Int?
        var contentType: String?
        var error: String?
    }

    private let state = Locked<(sent: [Sent], received: [Received])>(([], []))

    func add(_ sent: Sent) { state.withLock { $0.sent.append(sent) } }
    func add(_ received: Received) { state.withLock { $0.received.append(received) } }
    var sent: [Sent] { state.withLock { $0.sent } }
    var received: [Received] { state.withLock { $0.received } }
}

/// Records each attempt's request (willSend) and head (didReceive); adds `X-Plugin: yes` in prepare.
private struct AttemptPlugin: PluginType {
    let log: AttemptLog

    func prepare(_ request: TransportRequest, target: any TargetType) async throws -> TransportRequest {
        var request = request
        request.headerFields[HTTPField.Name("X-Plugin")!] = "yes"
        return request
    }

    func willSend(_ request: TransportRequest, target: any TargetType) async {
        log.add(
            AttemptLog.Sent(
                method: request.method.rawValue, lastEventID: request.headerFields[HTTPField.Name("Last-Event-ID")!],
                accept: request.headerFields[.accept], cacheControl: request.headerFields[.cacheControl]))
    }

    func didReceive(_ result: Result<ApiResponse, CurlewError>, target: any TargetType) async {
        switch result {
        case .success(let response):
            log.add(AttemptLog.Received(status: response.statusCode, contentType: response.headerFields[.contentType]))
        case .failure(let error):
            log.add(AttemptLog.Received(error: error.transportCode.map { "\($0)" } ?? "\(error)"))
        }
    }
}

extension CurlewError {
    fileprivate var transportCode: TransportError.Code? {
        if case .transport(let error) = self { return error.code }
        return nil
    }

    /// The code of a transport failure the stream threw: `.eventStream(.transport(error))`, the session's shape.
    fileprivate var streamTransportCode: TransportError.Code? {
        if case .eventStream(.transport(let error)) = self { return error.code }
        return nil
    }

    fileprivate var eventStreamError: EventStreamError? {
        if case .eventStream(let error) = self { return error }
        return nil
    }
}

extension EventStreamReading {
    fileprivate var curlewError: CurlewError? { error as? CurlewError }
}

/// A policy for tests: reconnection after 60 s unless the server's `retry` says otherwise (so only
/// that makes a reconnect come within a test's bounds), a small fixed backoff.
private func policy(_ change: (inout EventStreamPolicy) -> Void = { _ in }) -> EventStreamPolicy {
    var policy = EventStreamPolicy(
        reconnectionTime: .seconds(60),
        backoff: Backoff(base: .milliseconds(10), cap: .milliseconds(20), jitter: .none, resetAfter: .seconds(30)))
    change(&policy)
    return policy
}

private func newKey() -> String { UUID().uuidString }

/// A token of a streamed completion, in snake case on the wire.
private struct Token: Decodable, Sendable, Equatable {
    let tokenText: String
    let index: Int
}

private func snakeCaseDecoder() -> JSONDecoder {
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    return decoder
}

/// Records when the exchange enters and leaves a middleware.
private struct ScopeMiddleware: TransportMiddleware {
    let log: Locked<[String]>

    func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        log.withLock { $0.append("in") }
        defer { log.withLock { $0.append("out") } }
        return try await next(request, context, handler: handler)
    }
}

@Suite struct ProviderEventStreamTests {
    /// An attempt's stages end with its head: the middleware around it has returned while the stream is
    /// still open (its body is detached and read by the iterating task, no task of its own), and leaving
    /// the stream closes its connection.
    @Test func anAttemptsMiddlewareReturnsAtTheHeadAndLeavingClosesTheConnection() async throws {
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let plan = SSEPlan([.events("id: 1\ndata: one\n\n", end: .silent)])
            let log = Locked<[String]>([])
            let provider = Provider<EventsTarget>(session: session, middleware: [ScopeMiddleware(log: log)])
            do {
                var iterator = provider.events(for: EventsTarget(server, key: key, plan: plan), policy: policy()).makeAsyncIterator()
                let first = try await iterator.next()
                #expect(first == ServerSentEvents.Event(data: "one", id: "1"))
                #expect(log.withLock { $0 } == ["in", "out"])
                let open = try await server.records(key)
                #expect(open.map(\.outcome) == [nil])
            }
            let records = try await server.records(key, until: { $0.first?.outcome != nil })
            #expect(records.map(\.outcome) == ["client-gone"])
            #expect(log.withLock { $0 } == ["in", "out"])
        }
    }

    /// Each attempt runs the plugins: willSend sees its request (Last-Event-ID on the reconnect),
    /// didReceive its head; prepare's field reaches the server on both.
    @Test func pluginsSeeEveryAttemptsRequestAndHead() async throws {
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let plan = SSEPlan([.events("retry: 50\nid: 1\ndata: one\n\n", end: .close), .events("data: two\n\n", end: .silent)])
            let log = AttemptLog()
            let provider = Provider<EventsTarget>(session: session, plugins: [AttemptPlugin(log: log)])
            let reading = await readEvents(provider.events(for: EventsTarget(server, key: key, plan: plan), policy: policy()), count: 2)
            #expect(reading.events == [
                ServerSentEvents.Event(data: "one", id: "1", retry: .milliseconds(50)), ServerSentEvents.Event(data: "two", id: "1"),
            ])
            #expect(log.sent == [
                AttemptLog.Sent(method: "GET", lastEventID: nil, accept: "text/event-stream", cacheControl: "no-cache"),
                AttemptLog.Sent(method: "GET", lastEventID: "1", accept: "text/event-stream", cacheControl: "no-cache"),
            ])
            #expect(log.received == Array(repeating: AttemptLog.Received(status: 200, contentType: "text/event-stream"), count: 2))
            let records = try await server.records(key)
            #expect(records.map { $0.values("X-Plugin") } == [["yes"], ["yes"]])
            #expect(records.map { $0.values("Last-Event-ID") } == [[], ["1"]])
        }
    }

    /// An attempt that fails before its head reaches the plugins as an error; the last one allowed is
    /// thrown as a transport error.
    @Test func failedAttemptsReachThePluginsAndTheLastIsThrown() async throws {
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let log = AttemptLog()
            let provider = Provider<EventsTarget>(session: session, plugins: [AttemptPlugin(log: log)])
            let reading = await readEvents(
                provider.events(
                    for: EventsTarget(server, key: key, plan: SSEPlan([.noAnswer])),
                    policy: policy {
                        $0.reconnectionTime = .milliseconds(20)
                        $0.maxConsecutiveFailures = 2
                    }))
            #expect(reading.events.isEmpty)
            #expect(reading.curlewError?.streamTransportCode == .connectionClosed)
            #expect(log.sent.count == 2)
            #expect(log.received == Array(repeating: AttemptLog.Received(error: "connectionClosed"), count: 2))
            let records = try await server.records(key)
            #expect(records.count == 2)
        }
    }

    /// Typed events decode each event's data with the provider's decoder (snake case here); one that
    /// does not decode is handed over as a failure carrying its data, and the stream goes on.
    @Test func typedEventsDecodeTheirDataAndReportWhatDoesNotDecode() async throws {
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let plan = SSEPlan([
                .events(
                    "id: 1\ndata: {\"token_text\": \"Hel\", \"index\": 0}\n\n"
                        + "data: {\"token_text\": \"lo\",\ndata:  \"index\": 1}\n\n"
                        + "event: done\ndata: [DONE]\n\n"
                        + "data: {\"token_text\": \"!\", \"index\": 2}\n\n",
                    end: .close)
            ])
            let provider = Provider<EventsTarget>(session: session, decoder: snakeCaseDecoder())
            let reading = await readEvents(
                provider.events(
                    for: EventsTarget(server, key: key, plan: plan), as: Token.self, policy: policy { $0.reconnects = false }))
            #expect(reading.ended)
            #expect(reading.error == nil)
            #expect(reading.events.map(\.value) == [Token(tokenText: "Hel", index: 0), Token(tokenText: "lo", index: 1), nil, Token(tokenText: "!", index: 2)])
            #expect(reading.events.map(\.event.id) == ["1", "1", "1", "1"])
            #expect(reading.events.map(\.event.type) == ["message", "message", "done", "message"])
            guard reading.events.count == 4, case .failure(let failure) = reading.events[2].result else {
                Issue.record("expected the third event to fail decoding")
                return
            }
            guard case .objectMapping(_, let response) = failure else {
                Issue.record("expected objectMapping, got \(failure)")
                return
            }
            #expect(String(decoding: response.data, as: UTF8.self) == "[DONE]")
            #expect(response.statusCode == 200)
            // The attempt's head and request, whichever way the attempt started.
            #expect(response.headerFields[.contentType]?.hasPrefix("text/event-stream") == true)
            #expect(response.request?.url.contains("/sse?") == true)
        }
    }

    /// A provider whose stages do not wait (the default request closure, no plugins, no middleware)
    /// starts each attempt on the reading task, as a session does; with a request closure of its own each
    /// attempt's stages run until the head in a task. The two read the same stream the same way: the
    /// events, the reconnection with `Last-Event-ID`, and the failure that ends it.
    @Test(arguments: [false, true])
    func aProviderWithOrWithoutARequestClosureReadsTheSameStream(ownRequestClosure: Bool) async throws {
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let plan = SSEPlan([.events("retry: 50\nid: 7\ndata: one\n\n", end: .close), .status(404)])
            let provider =
                ownRequestClosure
                ? Provider<EventsTarget>(requestClosure: { endpoint in try endpoint.urlRequest() }, session: session)
                : Provider<EventsTarget>(session: session)
            let reading = await readEvents(provider.events(for: EventsTarget(server, key: key, plan: plan), policy: policy()))
            #expect(reading.events == [ServerSentEvents.Event(data: "one", id: "7", retry: .milliseconds(50))])
            #expect(reading.curlewError?.eventStreamError == .unexpectedStatus(404))
            let records = try await server.records(key)
            #expect(records.map(\.method) == ["GET", "GET"])
            #expect(records.map { $0.values("Last-Event-ID") } == [[], ["7"]])
            #expect(records.map { $0.header("Accept") } == ["text/event-stream", "text/event-stream"])
        }
    }

    /// A typed event decodes the event's data as the standard defines it (UTF-8, an invalid byte becoming
    /// U+FFFD), not the bytes that arrived: `{"s":"a\xFFb"}` decodes to `a\u{FFFD}b` (before, it failed
    /// to decode while `event.data` showed the replacement).
    @Test func typedEventsDecodeTheDataNotTheInvalidBytes() async throws {
        struct Text: Decodable, Sendable, Equatable { let s: String }
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let plan = SSEPlan([SSEAttempt([.sendBytes(Array("data: {\"s\":\"a".utf8) + [0xFF] + Array("b\"}\n\n".utf8))], end: .close)])
            let provider = Provider<EventsTarget>(session: session)
            let reading = await readEvents(
                provider.events(for: EventsTarget(server, key: key, plan: plan), as: Text.self, policy: policy { $0.reconnects = false }))
            #expect(reading.error == nil)
            #expect(reading.events.map(\.value) == [Text(s: "a\u{FFFD}b")])
            #expect(reading.events.map(\.event.data) == ["{\"s\":\"a\u{FFFD}b\"}"])
            #expect(reading.events.map(\.event.dataBytes.count) == [11])
        }
    }

    /// A provider's stream ends from another task with `close()`, and a cancelled one throws the session's
    /// shape inside `CurlewError.eventStream` (before: `.transport`, remapped), with `isCancellation` true.
    @Test func closeAndCancellationAsTheSessionsStreamHasThem() async throws {
        try await withSSEServerAndSession { server, session in
            let provider = Provider<EventsTarget>(session: session)
            let plan = SSEPlan([.events("data: one\n\n", end: .silent)])
            for closing in [true, false] {
                let stream = provider.events(for: EventsTarget(server, key: newKey(), plan: plan), policy: policy())
                let seen = Locked(false)
                let reading = Task { () -> (count: Int, error: CurlewError?) in
                    var count = 0
                    do {
                        for try await _ in stream {
                            count += 1
                            seen.withLock { $0 = true }
                        }
                    } catch {
                        return (count, error as? CurlewError)
                    }
                    return (count, nil)
                }
                #expect(await eventually(within: 20) { seen.withLock { $0 } })
                if closing { stream.close() } else { reading.cancel() }
                let result = await reading.value
                #expect(result.count == 1)
                if closing {
                    #expect(result.error == nil)
                } else {
                    #expect(result.error?.isCancellation == true)
                    #expect(result.error?.streamTransportCode == .cancelled, "\(String(describing: result.error))")
                }
            }
        }
    }

    /// A decoder given to the call replaces the provider's.
    @Test func aDecoderGivenToTheCallIsUsed() async throws {
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let plan = SSEPlan([.events("data: {\"token_text\": \"x\", \"index\": 3}\n\n", end: .close)])
            let provider = Provider<EventsTarget>(session: session)
            let reading = await readEvents(
                provider.events(
                    for: EventsTarget(server, key: key, plan: plan), as: Token.self, decoder: snakeCaseDecoder(),
                    policy: policy { $0.reconnects = false }))
            #expect(reading.events.map(\.value) == [Token(tokenText: "x", index: 3)])
            #expect(reading.ended)
        }
    }

    /// With `.fail`, an event that does not decode ends the stream by throwing objectMapping after the
    /// events before it, and the stream's connection is closed.
    @Test func anUndecodableEventEndsTheStreamWhenAskedTo() async throws {
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let plan = SSEPlan([
                .events(
                    "data: {\"token_text\": \"a\", \"index\": 0}\n\ndata: not json\n\ndata: {\"token_text\": \"b\", \"index\": 1}\n\n",
                    end: .silent)
            ])
            let provider = Provider<EventsTarget>(session: session, decoder: snakeCaseDecoder())
            let reading = await readEvents(
                provider.events(for: EventsTarget(server, key: key, plan: plan), as: Token.self, policy: policy(), undecodable: .fail))
            #expect(reading.events.map(\.value) == [Token(tokenText: "a", index: 0)])
            guard case .objectMapping(_, let response)? = reading.curlewError else {
                Issue.record("expected objectMapping, got \(String(describing: reading.error))")
                return
            }
            #expect(String(decoding: response.data, as: UTF8.self) == "not json")
            let records = try await server.records(key, until: { $0.first?.outcome != nil })
            #expect(records.map(\.outcome) == ["client-gone"])
        }
    }

    /// `reconnectTarget` makes each reconnect's target from the last id: a POST with a body first, a
    /// GET with the id in its query after (MCP's pattern).
    @Test func theReconnectTargetIsUsedForReconnects() async throws {
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let plan = SSEPlan([.events("retry: 50\nid: 41\ndata: one\n\n", end: .close), .events("data: two\n\n", end: .silent)])
            var first = EventsTarget(server, key: key, plan: plan)
            first.method = .post
            first.body = Data(#"{"jsonrpc":"2.0","id":1}"#.utf8)
            first.headers = ["Content-Type": "application/json"]
            let provider = Provider<EventsTarget>(session: session)
            let events = provider.events(for: first, policy: policy()) { lastEventID in
                EventsTarget(server, key: key, plan: plan, query: ["resume": lastEventID])
            }
            let reading = await readEvents(events, count: 2)
            #expect(reading.events == [
                ServerSentEvents.Event(data: "one", id: "41", retry: .milliseconds(50)), ServerSentEvents.Event(data: "two", id: "41"),
            ])
            let records = try await server.records(key)
            #expect(records.map(\.method) == ["POST", "GET"])
            #expect(records.map(\.body) == [#"{"jsonrpc":"2.0","id":1}"#, ""])
            let resumes = records.map { record in
                URLComponents(string: record.target)?.queryItems?.first { $0.name == "resume" }?.value
            }
            #expect(resumes == [nil, "41"])
            #expect(records.map { $0.values("Last-Event-ID") } == [[], ["41"]])
        }
    }

    /// A stubbed target's sample data is parsed as the stream, through the plugins, and it ends without
    /// reconnecting (with a short reconnection time that would otherwise come back).
    @Test func aStubbedTargetParsesItsSampleData() async throws {
        let log = AttemptLog()
        let provider = Provider<EventsTarget>(stubClosure: Provider.immediatelyStub, plugins: [AttemptPlugin(log: log)])
        let target = EventsTarget(
            sampleData: "\u{FEFF}retry: 10\nid: 1\ndata: one\n\ndata: two\r\n\r\n: comment\nevent: custom\ndata: three\rdata\r\rdata: cut")
        let reading = await readEvents(provider.events(for: target, policy: policy { $0.reconnectionTime = .milliseconds(10) }))
        #expect(reading.events == [
            ServerSentEvents.Event(data: "one", id: "1", retry: .milliseconds(10)),
            ServerSentEvents.Event(data: "two", id: "1"),
            ServerSentEvents.Event(type: "custom", data: "three\n", id: "1"),
        ])
        #expect(reading.ended)
        #expect(reading.error == nil)
        #expect(log.sent.count == 1)
        #expect(log.received.map(\.status) == [200])
    }

    /// A RetryMiddleware retries the first attempt's 503, but not a reconnect's: that one ends the
    /// stream (503 is not retryable by the stream's default policy) after exactly three requests.
    @Test func theRetryMiddlewareDoesNotRetryAReconnect() async throws {
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let plan = SSEPlan([
                .status(503), .events("retry: 20\nid: 1\ndata: one\n\n", end: .close), .status(503),
                .events("data: never\n\n", end: .silent),
            ])
            let retry = RetryMiddleware(policy: RetryPolicy(backoff: Backoff(base: .milliseconds(1), cap: .milliseconds(1))))
            let provider = Provider<EventsTarget>(session: session, middleware: [retry])
            let reading = await readEvents(provider.events(for: EventsTarget(server, key: key, plan: plan), policy: policy()))
            #expect(reading.events == [ServerSentEvents.Event(data: "one", id: "1", retry: .milliseconds(20))])
            #expect(reading.curlewError?.eventStreamError == .unexpectedStatus(503))
            let records = try await server.records(key, until: { $0.count >= 3 && $0.allSatisfy { $0.outcome != nil } })
            #expect(records.map(\.outcome) == ["answered", "closed", "answered"])
            #expect(records.map { $0.values("Last-Event-ID") } == [[], [], ["1"]])
        }
    }
}
