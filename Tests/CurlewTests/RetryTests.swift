// Curlew — RetryMiddleware against real servers on loopback that fail on demand: statuses, transport
// failures, method rules, Retry-After, jitter, budgets, deadlines, cancellation, bodies and handlers.
//
// Waits go through a TestClock (recorded, not slept) except in the cancellation tests. No test measures
// real time.

@testable import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

/// Counts requests per path, so a handler can fail the first N.
fileprivate final class RetryPathCounter: Sendable {
    private let counts = Locked<[String: Int]>([:])

    func next(_ path: String) -> Int {
        counts.withLock { counts in
            let count = counts[path, default: 0] + 1
            counts[path] = count
            return count
        }
    }
}

/// What a middleware inside the retry saw of each attempt.
fileprivate final class RetryAttemptLog: Sendable {
    struct Entry: Sendable, Equatable {
        let attempt: Int
        let timeout: Duration?
        let url: String
    }

    private let entries = Locked<[Entry]>([])

    func add(_ entry: Entry) { entries.withLock { $0.append(entry) } }
    var all: [Entry] { entries.withLock { $0 } }
    var attempts: [Int] { all.map(\.attempt) }
    var timeouts: [Duration?] { all.map(\.timeout) }
}

/// Records `context.attempt` and `request.timeout` of every exchange it passes on.
fileprivate struct RecordAttempts: TransportMiddleware {
    let log: RetryAttemptLog

    func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        log.add(.init(attempt: context.attempt, timeout: request.timeout, url: request.url))
        return try await next(request, context, handler: handler)
    }
}

/// The system clock, recording the waits asked for (so a test knows the middleware is waiting).
fileprivate final class ObservedSystemClock: MiddlewareClock {
    private let waits = Locked<[Duration]>([])

    var now: ContinuousClock.Instant { ContinuousClock.now }
    var date: Date { Date() }
    var requested: [Duration] { waits.withLock { $0 } }

    func sleep(for duration: Duration) async throws {
        waits.withLock { $0.append(duration) }
        try await SystemMiddlewareClock().sleep(for: duration)
    }
}

/// Serialized: the tests are cheap, and the HTTP/2 GOAWAY test's timing is easier on a quiet machine.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RetryTests {
    // MARK: Fixtures

    /// Answers `reply` to the first `count` requests of each path, then `final`.
    static func failing(_ count: Int, with reply: ServerReply, then final: ServerReply = .text("ok")) -> LocalHTTPServer.Handler {
        let counter = RetryPathCounter()
        return { request in counter.next(request.path) <= count ? reply : final }
    }

    static let busy = ServerReply.text("busy", status: 503)

    /// A provider whose only middleware is a retry (random draw fixed), with an attempt recorder inside it.
    fileprivate static func provider(
        _ session: CurlSession, policy: RetryPolicy = .default, budget: RetryBudget = RetryBudget(), clock: TestClock,
        random: Double = 0.5, log: RetryAttemptLog = RetryAttemptLog(), plugins: [any PluginType] = [],
        requestClosure: @escaping Provider<Local>.RequestClosure = Provider<Local>.defaultRequestMapping
    ) -> Provider<Local> {
        Provider<Local>(
            requestClosure: requestClosure, session: session, plugins: plugins,
            middleware: [RetryMiddleware(policy: policy, budget: budget, clock: clock, random: { random }), RecordAttempts(log: log)])
    }

    /// A chain of a retry (random draw fixed) and an attempt recorder around `session`.
    fileprivate static func chain(
        _ session: CurlSession, policy: RetryPolicy = .default, budget: RetryBudget = RetryBudget(), clock: TestClock,
        random: Double = 0.5, log: RetryAttemptLog
    ) -> MiddlewareChain {
        MiddlewareChain(
            [RetryMiddleware(policy: policy, budget: budget, clock: clock, random: { random }), RecordAttempts(log: log)],
            transport: session)
    }

    /// Runs `body` with a fresh session and no server.
    static func withSession<T>(_ body: (CurlSession) async throws -> T) async throws -> T {
        let session = try CurlSession()
        return try await ensuring({ try await body(session) }, cleanUp: { await session.shutdown() })
    }

    /// A target at `base` (a host or port with no server behind it).
    static func target(base: String, path: String = "/", method: HTTPRequest.Method = .get, headers: [String: String]? = nil) async throws
        -> Local
    {
        // Local needs a server for its initialiser; the base is replaced at once.
        let placeholder = try await LocalHTTPServer.start { _ in .text("unused") }
        try await placeholder.shutdown()
        var target = Local(placeholder, path, method: method)
        target.base = base
        target.headers = headers
        return target
    }

    static func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    /// `payload` in two chunks, from a sequence that can be read once.
    static func payloadChunks() -> AsyncStream<[UInt8]> {
        AsyncStream { continuation in
            continuation.yield(Array("pay".utf8))
            continuation.yield(Array("load".utf8))
            continuation.finish()
        }
    }

    /// The transport error inside a CurlewError, recording an issue for anything else.
    static func transportError(
        _ error: CurlewError?, sourceLocation: SourceLocation = #_sourceLocation
    ) -> TransportError? {
        guard case .transport(let failure) = error else {
            Issue.record("expected CurlewError.transport, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        return failure
    }

    // MARK: Statuses

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func eachDefaultStatusIsRetried(status: Int) async throws {
        try await withServer(Self.failing(1, with: .text("transient", status: status))) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let response = try await provider.request(Local(server, "/status"))
            #expect(response.statusCode == 200)
            #expect(Self.text(response.data) == "ok")
            #expect(server.requests.count == 2)
            #expect(log.attempts == [1, 2])
            #expect(clock.sleeps == [.milliseconds(50)])
        }
    }

    @Test(arguments: [400, 404, 418, 501, 505])
    func otherStatusesAreNotRetried(status: Int) async throws {
        try await withServer(Self.failing(1, with: .text("final", status: status))) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let response = try await provider.request(Local(server, "/status"))
            #expect(response.statusCode == status)
            #expect(Self.text(response.data) == "final")
            #expect(server.requests.count == 1)
            #expect(log.attempts == [1])
            #expect(clock.sleeps == [])
        }
    }

    @Test func theLastAttemptsStatusIsReturnedWhenAllFail() async throws {
        try await withServer({ _ in .text("still busy", status: 503, headers: [("X-Try", "n")]) }) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let response = try await provider.request(Local(server, "/down"))
            #expect(response.statusCode == 503)
            #expect(Self.text(response.data) == "still busy")
            #expect(server.requests.count == 3)
            #expect(log.attempts == [1, 2, 3])
            #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100)])
        }
    }

    @Test func maxAttemptsOfOneNeverRetries() async throws {
        try await withServer(Self.failing(1, with: Self.busy)) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, policy: RetryPolicy(maxAttempts: 1), clock: clock, log: log)
            let response = try await provider.request(Local(server, "/once"))
            #expect(response.statusCode == 503)
            #expect(server.requests.count == 1)
            #expect(log.attempts == [1])
            #expect(clock.sleeps == [])
        }
    }

    @Test func aPolicysOwnStatusesReplaceTheDefaults() async throws {
        let handler: LocalHTTPServer.Handler = { request in
            request.path == "/teapot" ? .text("teapot", status: 418) : .text("busy", status: 503)
        }
        try await withServer(handler) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, policy: RetryPolicy(maxAttempts: 2, statuses: [418]), clock: clock, log: log)
            let teapot = try await provider.request(Local(server, "/teapot"))
            #expect(teapot.statusCode == 418)
            #expect(server.requests.count == 2)
            let busy = try await provider.request(Local(server, "/busy"))
            #expect(busy.statusCode == 503)
            #expect(server.requests.map(\.path) == ["/teapot", "/teapot", "/busy"])
            #expect(log.attempts == [1, 2, 1])
            #expect(clock.sleeps == [.milliseconds(50)])
        }
    }

    @Test func pluginsSeeOneCallWhateverTheAttempts() async throws {
        try await withServer(Self.failing(2, with: Self.busy)) { server, session in
            let recorder = Recorder()
            let clock = TestClock()
            let provider = Self.provider(session, clock: clock, plugins: [RecordingPlugin(name: "A", recorder: recorder)])
            let response = try await provider.request(Local(server, "/p"))
            #expect(response.statusCode == 200)
            #expect(server.requests.count == 3)
            // prepare ran once: every attempt carries its header once.
            #expect(server.requests.map { $0.headers(named: "X-Plugin-A") } == [["yes"], ["yes"], ["yes"]])
            #expect(recorder.all == ["A.prepare", "A.willSend", "A.didReceive(200)", "A.process"])
        }
    }

    // MARK: Transport failures

    @Test func cannotConnectIsRetriedForGET() async throws {
        try await Self.withSession { session in
            try await withRefusingPort { port in
                let target = try await Self.target(base: "http://127.0.0.1:\(port)", path: "/nothing")
                let clock = TestClock()
                let log = RetryAttemptLog()
                let provider = Self.provider(session, clock: clock, log: log)
                let error = Self.transportError(await curlewError { try await provider.request(target) })
                #expect(error?.code == .cannotConnect, "\(String(describing: error))")
                #expect(log.attempts == [1, 2, 3])
                #expect(Set(log.all.map(\.url)).count == 1)
                #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100)])
            }
        }
    }

    @Test(arguments: [
        (HTTPRequest.Method.post, ["Idempotency-Key": "order-42"] as [String: String]?, [1, 2, 3]),
        (.post, nil, [1]),
        (.patch, ["Idempotency-Key": "order-43"], [1, 2, 3]),
        (.delete, nil, [1, 2, 3]),
    ])
    func cannotConnectToAServerThatWasShutDown(method: HTTPRequest.Method, headers: [String: String]?, attempts: [Int]) async throws {
        try await Self.withSession { session in
            let gone = try await LocalHTTPServer.start { _ in .text("never") }
            try await gone.shutdown()
            // The shut-down server's port is not reused: another test's server could take it meanwhile.
            await withRefusingPort { port in
                var target = Local(gone, "/orders", method: method, task: .requestData(Data("{}".utf8)))
                target.base = "http://127.0.0.1:\(port)"
                target.headers = headers
                let clock = TestClock()
                let log = RetryAttemptLog()
                let provider = Self.provider(session, clock: clock, log: log)
                let error = Self.transportError(await curlewError { try await provider.request(target) })
                #expect(error?.code == .cannotConnect, "\(String(describing: error))")
                #expect(log.attempts == attempts)
                #expect(clock.sleeps == Self.waits(before: attempts))
            }
        }
    }

    @Test(arguments: [(HTTPRequest.Method.get, RawEnding.close), (.get, .reset), (.put, .close), (.put, .reset)])
    func aConnectionEndedBeforeAnyResponseByteIsRetriedForIdempotentMethods(method: HTTPRequest.Method, ending: RawEnding) async throws {
        try await withServer(Self.failing(2, with: .raw([], after: ending))) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let task: RequestTask = method == .put ? .requestData(Data("payload".utf8)) : .requestPlain
            let response = try await provider.request(Local(server, "/flaky", method: method, task: task))
            #expect(response.statusCode == 200)
            #expect(Self.text(response.data) == "ok")
            #expect(server.requests.count == 3)
            #expect(server.requests.map(\.method) == Array(repeating: method.rawValue, count: 3))
            if method == .put { #expect(server.requests.map(\.bodyText) == ["payload", "payload", "payload"]) }
            #expect(log.attempts == [1, 2, 3])
            #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100)])
        }
    }

    @Test(arguments: [RawEnding.close, .reset])
    func aConnectionEndedBeforeAnyResponseByteIsNotRetriedForPOST(ending: RawEnding) async throws {
        try await withServer(Self.failing(2, with: .raw([], after: ending))) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let target = Local(server, "/charge", method: .post, task: .requestData(Data("amount=5".utf8)))
            let error = Self.transportError(await curlewError { try await provider.request(target) })
            #expect(error?.code == (ending == .close ? .connectionClosed : .connectionReset), "\(String(describing: error))")
            #expect(error?.responseBytesReceived == false)
            #expect(server.requests.count == 1)
            #expect(log.attempts == [1])
            #expect(clock.sleeps == [])
        }
    }

    @Test func aConnectionClosedBeforeAnyResponseByteIsNotRetriedForPOSTEvenWhenThePolicyRetriesPOST() async throws {
        // The policy retries POST on statuses, but a connection that closed may have carried a processed
        // request: only idempotent methods and opted-in requests are sent again.
        try await withServer(Self.failing(1, with: .raw([], after: .close))) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let policy = RetryPolicy(methods: RetryPolicy.idempotentMethods.union([.post]))
            let provider = Self.provider(session, policy: policy, clock: clock, log: log)
            let target = Local(server, "/charge", method: .post, task: .requestData(Data("amount=5".utf8)))
            let error = Self.transportError(await curlewError { try await provider.request(target) })
            #expect(error?.code == .connectionClosed, "\(String(describing: error))")
            #expect(server.requests.count == 1)
            #expect(log.attempts == [1])
        }
    }

    @Test func aConnectionClosedBeforeAnyResponseByteIsRetriedForAnOptedInPOST() async throws {
        try await withServer(Self.failing(2, with: .raw([], after: .close))) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            var target = Local(server, "/charge", method: .post, task: .requestData(Data("amount=5".utf8)))
            target.headers = ["Idempotency-Key": "charge-7"]
            let response = try await provider.request(target)
            #expect(response.statusCode == 200)
            #expect(server.requests.count == 3)
            #expect(server.requests.map { $0.header("Idempotency-Key") } == ["charge-7", "charge-7", "charge-7"])
            #expect(server.requests.map(\.bodyText) == ["amount=5", "amount=5", "amount=5"])
            #expect(log.attempts == [1, 2, 3])
            #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100)])
        }
    }

    @Test func aConnectionClosedMidBodyIsNotRetried() async throws {
        let cut = ServerReply.raw(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8), after: .close)
        try await withServer(Self.failing(1, with: cut)) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let error = Self.transportError(await curlewError { try await provider.request(Local(server, "/cut")) })
            #expect(error?.code == .connectionClosed, "\(String(describing: error))")
            #expect(error?.curlCode == 18)  // CURLE_PARTIAL_FILE
            #expect(error?.responseBytesReceived == true)
            #expect(server.requests.count == 1)
            #expect(log.attempts == [1])
            #expect(clock.sleeps == [])
        }
    }

    /// A head the server cut short (status line and a field, then FIN, no empty line): the response is
    /// incomplete (RFC 9112 §8), so the call fails, and having received response bytes it is not
    /// retried. The engine reports it as `.invalidResponse` ("the response ended without a head") when
    /// the body is streamed; either that or `.connectionClosed` is right here.
    @Test func aConnectionClosedMidHeadIsAFailureAndNotRetried() async throws {
        let cut = ServerReply.raw(Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n".utf8), after: .close)
        try await withServer(Self.failing(1, with: cut)) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let error = Self.transportError(await curlewError { try await provider.request(Local(server, "/cut-head")) })
            #expect(error?.code == .connectionClosed || error?.code == .invalidResponse, "\(String(describing: error))")
            #expect(server.requests.count == 1)
            #expect(log.attempts == [1])
            #expect(clock.sleeps == [])
        }
    }

    @Test func aConnectionClosedMidHeadOfAStreamedResponseIsAFailureAndNotRetried() async throws {
        let cut = ServerReply.raw(Array("HTTP/1.1 503 Busy\r\nRetry-After: 1\r\n".utf8), after: .close)
        try await withServer(Self.failing(1, with: cut)) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let chain = Self.chain(session, clock: clock, log: log)
            let calls = Locked(0)
            let error = Self.transportError(
                await curlewError {
                    try await chain.perform(TransportRequest(url: server.url("/cut-head"))) { head, _ throws(CurlewError) in
                        calls.withLock { $0 += 1 }
                        return head.status.code
                    }
                })
            #expect(error?.code == .invalidResponse, "\(String(describing: error))")
            #expect(calls.withLock { $0 } == 0)
            #expect(server.requests.count == 1)
            #expect(log.attempts == [1])
            #expect(clock.sleeps == [])
        }
    }

    @Test func dnsFailureIsRetriedThenReported() async throws {
        try await Self.withSession { session in
            let target = try await Self.target(base: "http://nonexistent.invalid", path: "/x")
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let error = Self.transportError(await curlewError { try await provider.request(target) })
            #expect(error?.code == .dnsFailure, "\(String(describing: error))")
            #expect(error?.url == "http://nonexistent.invalid/x")
            #expect(log.attempts == [1, 2, 3])
            #expect(log.all.map(\.url) == Array(repeating: "http://nonexistent.invalid/x", count: 3))
            #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100)])
        }
    }

    @Test func aTotalTimeoutIsNotRetried() async throws {
        try await withServer({ _ in .hang }) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let chain = Self.chain(session, clock: clock, log: log)
            let error = Self.transportError(
                await curlewError { try await chain.response(for: TransportRequest(url: server.url("/hang"), timeout: .milliseconds(300))) })
            #expect(error?.code == .timedOut, "\(String(describing: error))")
            #expect(error?.timeout == .total)
            #expect(server.requests.count == 1)
            #expect(log.attempts == [1])
            #expect(log.timeouts == [.milliseconds(300)])
            #expect(clock.sleeps == [])
        }
    }

    /// GOAWAY with last-stream-id 0 while a GET is in progress (see HTTP2Tests'
    /// goawayKeepingNothingFailsOrRetriesTheUnprocessedRequest): libcurl 7.88.1 either retries the
    /// request itself on a new connection, or fails it with `.http2ConnectionFailed` before any response
    /// byte, which the middleware retries. Either way the caller gets the answer from connection 2.
    @Test func goawayLeavingARequestUnprocessedEndsInASuccessOnANewConnection() async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withH2TestServer(.tls(fixtures.leaf)) { server in
            try await Self.withSession(trusting: fixtures) { session in
                let clock = TestClock()
                let log = RetryAttemptLog()
                let chain = Self.chain(session, clock: clock, log: log)
                let warmUp = try H2Report(try await session.execute(TransportRequest(url: server.url("/ok"))).body)
                async let held = Self.outcome { () async throws(CurlewError) -> TransportResponse in
                    try await chain.response(for: TransportRequest(url: server.url("/delay?ms=1000")))
                }
                let before = try await server.stats(until: { $0.inProgress == 1 })
                try #require(before.inProgress == 1)
                let goaway = try H2Report(try await session.execute(TransportRequest(url: server.url("/goaway?keep=0"))).body)
                #expect(goaway.connection == warmUp.connection)
                let response = try await held.get()
                #expect(response.status.code == 200)
                #expect(response.httpVersion == .http2)
                let report = try H2Report(response.body)
                #expect(report.connection == 2)
                #expect(report.stream == 1)
                #expect(report.path == "/delay?ms=1000")
                switch log.attempts {
                case [1]: #expect(clock.sleeps == [])  // libcurl retried
                case [1, 2]: #expect(clock.sleeps == [.milliseconds(50)])  // the middleware retried
                default: Issue.record("attempts \(log.attempts)")
                }
                let later = try H2Report(try await session.execute(TransportRequest(url: server.url("/ok"))).body)
                #expect(later.connection == 2)
                let stats = try await server.stats()
                #expect(stats.goawaysSent == 1)
                #expect(stats.connections == 2)
                // warm-up, the unprocessed request, /goaway, its second sending, later
                #expect(stats.requests == 5)
                print("RetryTests: GOAWAY keep=0: attempts \(log.attempts)")
            }
        }
    }

    /// A server that always refuses the stream (RST_STREAM REFUSED_STREAM): libcurl 7.88 sends the
    /// request again itself, on a new connection, up to 5 times, then fails; the middleware then retries
    /// a GET (and an opted-in POST) as a connection ended before any response byte, never a plain POST.
    @Test(arguments: [
        (HTTPRequest.Method.get, false, [1, 2, 3]), (.post, true, [1, 2, 3]), (.post, false, [1]),
    ])
    func aStreamAlwaysRefusedIsRetriedByLibcurlThenByTheMiddlewareForGETOrAnOptedInPOST(
        method: HTTPRequest.Method, optedIn: Bool, attempts: [Int]
    ) async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withH2TestServer(.tls(fixtures.leaf)) { server in
            try await Self.withSession(trusting: fixtures) { session in
                let sent = try await Self.failure(of: method, optedIn: optedIn, to: server.url("/reset?code=refused"), through: session)
                #expect(sent.error?.code == .connectionReset, "\(String(describing: sent.error))")
                #expect(sent.error?.responseBytesReceived == false)
                #expect(sent.attempts == attempts)
                #expect(sent.sleeps == Self.waits(before: attempts))
                // Each attempt is libcurl's first sending and its 5 retries (the server counts a reset
                // once written, which may be after the client has read it).
                let stats = try await server.stats(until: { $0.resetsSent >= 6 * attempts.count })
                #expect(stats.resetsSent == 6 * attempts.count)
                #expect(stats.requests == 6 * attempts.count)
            }
        }
    }

    /// A stream refused once is sent again by libcurl itself: the middleware sees one attempt, a success.
    @Test func aStreamRefusedOnceIsSentAgainByLibcurlAlone() async throws {
        let fixtures = try await TLSFixtures.shared()
        try await withH2TestServer(.tls(fixtures.leaf)) { server in
            try await Self.withSession(trusting: fixtures) { session in
                let clock = TestClock()
                let log = RetryAttemptLog()
                let chain = Self.chain(session, clock: clock, log: log)
                let response = try await chain.response(for: TransportRequest(url: server.url("/refuse-once?tag=retry")))
                #expect(response.status.code == 200)
                #expect(try H2Report(response.body).path == "/refuse-once?tag=retry")
                #expect(log.attempts == [1])
                #expect(clock.sleeps == [])
                let stats = try await server.stats(until: { $0.resetsSent >= 1 })
                #expect(stats.resetsSent == 1)
                #expect(stats.requests == 2)
            }
        }
    }

    /// A TLS handshake that fails (the server speaks TLS 1.2 at most, the client asks for 1.3) proves
    /// nothing was sent: retried for a GET and an opted-in POST, not for a plain POST.
    @Test(arguments: [
        (HTTPRequest.Method.get, false, [1, 2, 3]), (.post, true, [1, 2, 3]), (.post, false, [1]),
    ])
    func aFailedTLSHandshakeIsRetriedForRetriedMethods(method: HTTPRequest.Method, optedIn: Bool, attempts: [Int]) async throws {
        let fixtures = try await TLSFixtures.shared()
        var options = TLSServerOptions(serving: fixtures.leaf)
        options.maximumTLSVersion = .v1_2
        try await withTLSTestServer(options) { server in
            try await Self.withSession(trusting: fixtures, minimumVersion: .tls1_3) { session in
                let sent = try await Self.failure(of: method, optedIn: optedIn, to: server.url("/handshake"), through: session)
                #expect(sent.error?.code == .tlsFailure, "\(String(describing: sent.error))")
                #expect(sent.error?.tlsReason == .handshakeFailed)
                #expect(sent.attempts == attempts)
                #expect(sent.sleeps == Self.waits(before: attempts))
            }
        }
    }

    /// Runs `body` with a session that trusts the test CA, and shuts it down.
    static func withSession(
        trusting fixtures: TLSFixtures, minimumVersion: SessionConfiguration.TLS.Version? = nil, _ body: (CurlSession) async throws -> Void
    ) async throws {
        var configuration = SessionConfiguration()
        configuration.tls.trustRoots = .file(fixtures.ca.certificate)
        if let minimumVersion { configuration.tls.minimumVersion = minimumVersion }
        let session = try CurlSession(configuration: configuration)
        try await ensuring({ try await body(session) }, cleanUp: { await session.shutdown() })
    }

    /// Sends `method` (a POST with a small body, opted in to retries when asked) to `url` through a retry
    /// chain that is expected to fail: the transport error it ends with, the attempts and the waits.
    static func failure(
        of method: HTTPRequest.Method, optedIn: Bool, to url: String, through session: CurlSession,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (error: TransportError?, attempts: [Int], sleeps: [Duration]) {
        let clock = TestClock()
        let log = RetryAttemptLog()
        let chain = Self.chain(session, clock: clock, log: log)
        let request = try TransportRequest(
            url: url, method: method, headers: optedIn ? [("Idempotency-Key", "opted-in")] : [],
            body: method == .post ? .data(Data("{}".utf8)) : nil)
        let error = await curlewError({ try await chain.response(for: request) }, sourceLocation: sourceLocation)
        return (transportError(error, sourceLocation: sourceLocation), log.attempts, clock.sleeps)
    }

    /// The default backoff's waits (random draw 0.5) before each attempt after the first.
    static func waits(before attempts: [Int]) -> [Duration] {
        Array([Duration.milliseconds(50), .milliseconds(100)].prefix(attempts.count - 1))
    }

    static func outcome<T>(_ operation: () async throws(CurlewError) -> T) async -> Result<T, CurlewError> {
        do throws(CurlewError) {
            return .success(try await operation())
        } catch {
            return .failure(error)
        }
    }

    // MARK: Methods

    @Test func postIsNotRetriedByDefault() async throws {
        try await withServer(Self.failing(1, with: Self.busy)) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let response = try await provider.request(Local(server, "/orders", method: .post, task: .requestData(Data("{}".utf8))))
            #expect(response.statusCode == 503)
            #expect(Self.text(response.data) == "busy")
            #expect(server.requests.count == 1)
            #expect(log.attempts == [1])
            #expect(clock.sleeps == [])
        }
    }

    @Test func postWithAnIdempotencyKeyIsRetried() async throws {
        try await withServer(Self.failing(2, with: Self.busy)) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            var target = Local(server, "/orders", method: .post, task: .requestData(Data(#"{"n":1}"#.utf8)))
            target.headers = ["Idempotency-Key": "order-42"]
            let response = try await provider.request(target)
            #expect(response.statusCode == 200)
            #expect(server.requests.count == 3)
            #expect(server.requests.map { $0.header("Idempotency-Key") } == ["order-42", "order-42", "order-42"])
            #expect(server.requests.map(\.bodyText) == [#"{"n":1}"#, #"{"n":1}"#, #"{"n":1}"#])
            #expect(log.attempts == [1, 2, 3])
            #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100)])
        }
    }

    @Test func aPolicyRetryingPOSTRetriesItOn503() async throws {
        try await withServer(Self.failing(1, with: Self.busy)) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let policy = RetryPolicy(methods: RetryPolicy.idempotentMethods.union([.post]))
            let provider = Self.provider(session, policy: policy, clock: clock, log: log)
            let response = try await provider.request(Local(server, "/orders", method: .post, task: .requestData(Data("{}".utf8))))
            #expect(response.statusCode == 200)
            #expect(server.requests.map(\.method) == ["POST", "POST"])
            #expect(log.attempts == [1, 2])
            #expect(clock.sleeps == [.milliseconds(50)])
        }
    }

    @Test func theOptInFieldIsThePolicys() async throws {
        try await withServer(Self.failing(1, with: Self.busy)) { server, session in
            let clock = TestClock()
            var policy = RetryPolicy.default
            policy.optInField = HTTPField.Name("X-Retry-Safe")
            let provider = Self.provider(session, policy: policy, clock: clock)
            var keyed = Local(server, "/keyed", method: .post)
            keyed.headers = ["Idempotency-Key": "k"]
            let response1 = try await provider.request(keyed)
            #expect(response1.statusCode == 503)
            var safe = Local(server, "/safe", method: .post)
            safe.headers = ["X-Retry-Safe": "1"]
            let response2 = try await provider.request(safe)
            #expect(response2.statusCode == 200)
            var none = RetryPolicy.default
            none.optInField = nil
            let strict = Self.provider(session, policy: none, clock: clock)
            var keyedAgain = Local(server, "/keyed-again", method: .post)
            keyedAgain.headers = ["Idempotency-Key": "k"]
            let response3 = try await strict.request(keyedAgain)
            #expect(response3.statusCode == 503)
            #expect(server.requests.map(\.path) == ["/keyed", "/safe", "/safe", "/keyed-again"])
            #expect(clock.sleeps == [.milliseconds(50)])
        }
    }

    // MARK: Retry-After

    @Test func retryAfterSecondsIsTheWait() async throws {
        try await withServer(Self.failing(1, with: .text("later", status: 503, headers: [("Retry-After", "2")]))) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let response = try await provider.request(Local(server, "/ra"))
            #expect(response.statusCode == 200)
            #expect(server.requests.count == 2)
            #expect(log.attempts == [1, 2])
            #expect(clock.sleeps == [.seconds(2)])
        }
    }

    /// TestClock's wall clock starts at Tue, 14 Nov 2023 22:13:20 GMT; each form names 3 s later.
    @Test(arguments: ["Tue, 14 Nov 2023 22:13:23 GMT", "Tuesday, 14-Nov-23 22:13:23 GMT", "Tue Nov 14 22:13:23 2023"])
    func retryAfterAnHTTPDateIsRelativeToTheClocksDate(date: String) async throws {
        try await withServer(Self.failing(1, with: .text("later", status: 429, headers: [("Retry-After", date)]))) { server, session in
            let clock = TestClock()
            #expect(clock.date == Date(timeIntervalSince1970: 1_700_000_000))
            let provider = Self.provider(session, clock: clock)
            let response = try await provider.request(Local(server, "/ra-date"))
            #expect(response.statusCode == 200)
            #expect(server.requests.count == 2)
            #expect(clock.sleeps == [.seconds(3)])
        }
    }

    @Test func retryAfterADateAlreadyPastRetriesAtOnce() async throws {
        let reply = ServerReply.text("later", status: 503, headers: [("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT")])
        try await withServer(Self.failing(1, with: reply)) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let response = try await provider.request(Local(server, "/ra-past"))
            #expect(response.statusCode == 200)
            #expect(server.requests.count == 2)
            #expect(log.attempts == [1, 2])
            #expect(clock.sleeps == [])  // a zero wait is not slept
        }
    }

    @Test(arguments: [
        ("60", Duration.seconds(60), true), ("61", .seconds(60), false), ("120", .seconds(60), false),
        ("120", .seconds(120), true), ("Tue, 14 Nov 2023 22:14:20 GMT", .seconds(60), true),
        ("Tue, 14 Nov 2023 22:14:21 GMT", .seconds(60), false), ("99999999999999999999", .seconds(60), false),
    ])
    func retryAfterAboveTheMaximumReturnsTheResponseAsIs(value: String, maximum: Duration, retried: Bool) async throws {
        try await withServer(Self.failing(1, with: .text("later", status: 503, headers: [("Retry-After", value)]))) { server, session in
            let clock = TestClock()
            let budget = RetryBudget()
            var policy = RetryPolicy.default
            policy.maxRetryAfter = maximum
            let provider = Self.provider(session, policy: policy, budget: budget, clock: clock)
            let response = try await provider.request(Local(server, "/ra-max"))
            if retried {
                #expect(response.statusCode == 200)
                #expect(server.requests.count == 2)
                #expect(clock.sleeps.count == 1)
                #expect(clock.sleeps.first == maximum)
            } else {
                #expect(response.statusCode == 503)
                #expect(Self.text(response.data) == "later")
                #expect(response.headerFields[.retryAfter] == value)
                #expect(server.requests.count == 1)
                #expect(clock.sleeps == [])
                // Nothing was spent on a retry that did not happen.
                #expect(budget.tokens(for: server.baseURL, at: clock.now) == 10)
            }
        }
    }

    @Test func anUnreadableRetryAfterFallsBackToTheBackoff() async throws {
        try await withServer(Self.failing(1, with: .text("later", status: 503, headers: [("Retry-After", "soon")]))) { server, session in
            let clock = TestClock()
            let provider = Self.provider(session, clock: clock)
            let response4 = try await provider.request(Local(server, "/ra-bad"))
            #expect(response4.statusCode == 200)
            #expect(server.requests.count == 2)
            #expect(clock.sleeps == [.milliseconds(50)])
        }
    }

    @Test func retryAfterOnAStatusNotRetriedIsIgnored() async throws {
        try await withServer(Self.failing(1, with: .text("no", status: 501, headers: [("Retry-After", "1")]))) { server, session in
            let clock = TestClock()
            let provider = Self.provider(session, clock: clock)
            let response5 = try await provider.request(Local(server, "/ra-501"))
            #expect(response5.statusCode == 501)
            #expect(server.requests.count == 1)
            #expect(clock.sleeps == [])
        }
    }

    // MARK: Jitter

    @Test func aZeroDrawRetriesWithoutWaiting() async throws {
        try await withServer(Self.failing(2, with: Self.busy)) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, random: 0, log: log)
            let response6 = try await provider.request(Local(server, "/j0"))
            #expect(response6.statusCode == 200)
            #expect(server.requests.count == 3)
            #expect(log.attempts == [1, 2, 3])
            #expect(clock.sleeps == [])  // zero waits are skipped, not slept
        }
    }

    @Test func aHalfDrawWaitsHalfTheBound() async throws {
        try await withServer(Self.failing(2, with: Self.busy)) { server, session in
            let clock = TestClock()
            let policy = RetryPolicy(backoff: Backoff(base: .milliseconds(100), cap: .seconds(1)))
            let provider = Self.provider(session, policy: policy, clock: clock, random: 0.5)
            let response7 = try await provider.request(Local(server, "/j5"))
            #expect(response7.statusCode == 200)
            #expect(server.requests.count == 3)
            #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100)])
        }
    }

    @Test func aDrawJustBelowOneStaysBelowTheBound() async throws {
        try await withServer(Self.failing(3, with: Self.busy)) { server, session in
            let clock = TestClock()
            let policy = RetryPolicy(maxAttempts: 4, backoff: Backoff(base: .milliseconds(100), cap: .milliseconds(300)))
            let provider = Self.provider(session, policy: policy, clock: clock, random: 0.999_999)
            let response8 = try await provider.request(Local(server, "/j9"))
            #expect(response8.statusCode == 200)
            #expect(server.requests.count == 4)
            let sleeps = clock.sleeps
            let bounds: [Duration] = [.milliseconds(100), .milliseconds(200), .milliseconds(300)]
            #expect(sleeps.count == 3)
            for (sleep, bound) in zip(sleeps, bounds) {
                #expect(sleep < bound)
                #expect(sleep >= bound * 0.999)
            }
        }
    }

    @Test func noJitterWaitsExactlyTheCappedBounds() async throws {
        try await withServer(Self.failing(4, with: Self.busy)) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let policy = RetryPolicy(maxAttempts: 5, backoff: Backoff(base: .milliseconds(100), cap: .milliseconds(400), jitter: .none))
            let provider = Self.provider(session, policy: policy, clock: clock, random: 0.123, log: log)
            let response9 = try await provider.request(Local(server, "/none"))
            #expect(response9.statusCode == 200)
            #expect(server.requests.count == 5)
            #expect(log.attempts == [1, 2, 3, 4, 5])
            #expect(clock.sleeps == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(400)])
        }
    }

    // MARK: Budget

    @Test func aSpentBudgetForOneOriginLeavesAnotherOriginRetrying() async throws {
        try await withServer({ _ in .text("a is down", status: 503) }) { serverA, session in
            let serverB = try await LocalHTTPServer.start(handler: Self.failing(1, with: Self.busy))
            try await ensuring(
                {
                    let budget = RetryBudget(capacity: 2, refillPerSecond: 0, depositPerSuccess: 0)
                    let clock = TestClock()
                    let policy = RetryPolicy(maxAttempts: 5)
                    let provider = Self.provider(session, policy: policy, budget: budget, clock: clock)
                    #expect(budget.tokens(for: serverA.url("/"), at: clock.now) == 2)
                    #expect(budget.tokens(for: serverB.url("/"), at: clock.now) == 2)

                    // A: two retries spend its bucket; the third failure is returned as it is.
                    let a = try await provider.request(Local(serverA, "/a"))
                    #expect(a.statusCode == 503)
                    #expect(Self.text(a.data) == "a is down")
                    #expect(serverA.requests.count == 3)
                    #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100)])
                    #expect(budget.tokens(for: serverA.url("/"), at: clock.now) == 0)
                    #expect(budget.tokens(for: serverB.url("/"), at: clock.now) == 2)

                    // B still retries.
                    let b = try await provider.request(Local(serverB, "/b"))
                    #expect(b.statusCode == 200)
                    #expect(serverB.requests.count == 2)
                    #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100), .milliseconds(50)])
                    #expect(budget.tokens(for: serverB.url("/"), at: clock.now) == 1)
                    #expect(budget.tokens(for: serverA.url("/"), at: clock.now) == 0)

                    // Another middleware sharing the budget finds A's bucket empty: no retry at all.
                    let otherClock = TestClock()
                    let other = Self.provider(session, policy: policy, budget: budget, clock: otherClock)
                    let again = try await other.request(Local(serverA, "/a"))
                    #expect(again.statusCode == 503)
                    #expect(serverA.requests.count == 4)
                    #expect(otherClock.sleeps == [])
                },
                cleanUp: { try? await serverB.shutdown() })
        }
    }

    @Test func aResponseEndingTheExchangeDepositsIntoTheBudget() async throws {
        try await withServer(Self.failing(1, with: Self.busy)) { server, session in
            let budget = RetryBudget(capacity: 2, refillPerSecond: 0, depositPerSuccess: 0.5)
            let clock = TestClock()
            let provider = Self.provider(session, budget: budget, clock: clock)
            let response10 = try await provider.request(Local(server, "/d"))
            #expect(response10.statusCode == 200)
            // One token taken for the retry, half a token back for the success.
            #expect(budget.tokens(for: server.baseURL, at: clock.now) == 1.5)
            let response11 = try await provider.request(Local(server, "/d"))
            #expect(response11.statusCode == 200)
            #expect(budget.tokens(for: server.baseURL, at: clock.now) == 2)
            #expect(server.requests.count == 3)
        }
    }

    /// The budget's documentation: tokens come back "with time and with successful responses", so that
    /// "retries stay under about one per second plus 10% of the successful calls". A 503 returned because
    /// the budget had no token left is not a success: it must not refill the bucket of an origin that is
    /// down, or a dead dependency keeps earning retries from its own failures.
    @Test func aFinalRetryableStatusIsNotASuccessForTheBudget() async throws {
        try await withServer({ _ in .text("down", status: 503) }) { server, session in
            let budget = RetryBudget(capacity: 1, refillPerSecond: 0, depositPerSuccess: 0.5)
            let clock = TestClock()
            let provider = Self.provider(session, policy: RetryPolicy(maxAttempts: 5), budget: budget, clock: clock)
            let response12 = try await provider.request(Local(server, "/down"))
            #expect(response12.statusCode == 503)
            #expect(server.requests.count == 2)
            #expect(budget.tokens(for: server.baseURL, at: clock.now) == 0)
            let response13 = try await provider.request(Local(server, "/down"))
            #expect(response13.statusCode == 503)
            #expect(server.requests.count == 3)
            #expect(budget.tokens(for: server.baseURL, at: clock.now) == 0)
        }
    }

    // MARK: Deadline

    /// Backoff without jitter, 200 ms doubling; a deadline 1 s away: attempts get 1 s, 800 ms and 400 ms,
    /// and the wait of 800 ms after the third would reach the deadline, so the 503 is returned.
    static let deadlinePolicy = RetryPolicy(maxAttempts: 10, backoff: Backoff(base: .milliseconds(200), cap: .seconds(10), jitter: .none))

    @Test func aRequestTimeoutSpansAllAttemptsThroughAChain() async throws {
        try await withServer({ _ in Self.busy }) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let chain = Self.chain(session, policy: Self.deadlinePolicy, clock: clock, log: log)
            let response = try await chain.response(for: TransportRequest(url: server.url("/deadline"), timeout: .seconds(1)))
            #expect(response.status.code == 503)
            #expect(server.requests.count == 3)
            #expect(log.attempts == [1, 2, 3])
            #expect(log.timeouts == [.seconds(1), .milliseconds(800), .milliseconds(400)])
            #expect(clock.sleeps == [.milliseconds(200), .milliseconds(400)])
        }
    }

    @Test func aRequestClosuresTimeoutOverridesThePolicysTotalTimeout() async throws {
        try await withServer({ _ in Self.busy }) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            var policy = Self.deadlinePolicy
            policy.totalTimeout = .seconds(10)
            let provider = Self.provider(
                session, policy: policy, clock: clock, log: log,
                requestClosure: { endpoint in
                    var request = try endpoint.urlRequest()
                    request.timeout = .seconds(1)
                    return request
                })
            let response = try await provider.request(Local(server, "/deadline"))
            #expect(response.statusCode == 503)
            #expect(server.requests.count == 3)
            #expect(log.timeouts == [.seconds(1), .milliseconds(800), .milliseconds(400)])
            #expect(clock.sleeps == [.milliseconds(200), .milliseconds(400)])
        }
    }

    @Test func thePolicysTotalTimeoutIsTheDeadlineWhenTheRequestHasNone() async throws {
        try await withServer({ _ in Self.busy }) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            var policy = Self.deadlinePolicy
            policy.totalTimeout = .seconds(1)
            let provider = Self.provider(session, policy: policy, clock: clock, log: log)
            let response = try await provider.request(Local(server, "/deadline"))
            #expect(response.statusCode == 503)
            #expect(server.requests.count == 3)
            #expect(log.timeouts == [.seconds(1), .milliseconds(800), .milliseconds(400)])
            #expect(clock.sleeps == [.milliseconds(200), .milliseconds(400)])
        }
    }

    @Test func withoutADeadlineAttemptsKeepTheSessionsTimeout() async throws {
        try await withServer(Self.failing(2, with: Self.busy)) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let response14 = try await provider.request(Local(server, "/no-deadline"))
            #expect(response14.statusCode == 200)
            #expect(log.timeouts == [nil, nil, nil])
        }
    }

    @Test func aRetryAfterReachingTheDeadlineIsNotWaited() async throws {
        try await withServer({ _ in .text("later", status: 503, headers: [("Retry-After", "2")]) }) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let chain = Self.chain(session, clock: clock, log: log)
            let response = try await chain.response(for: TransportRequest(url: server.url("/ra-deadline"), timeout: .seconds(1)))
            #expect(response.status.code == 503)
            #expect(server.requests.count == 1)
            #expect(log.timeouts == [.seconds(1)])
            #expect(clock.sleeps == [])
        }
    }

    @Test func aTransportFailuresBackoffReachingTheDeadlineStopsRetrying() async throws {
        try await withServer(Self.failing(5, with: .raw([], after: .close))) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let chain = Self.chain(session, policy: Self.deadlinePolicy, clock: clock, log: log)
            let error = Self.transportError(
                await curlewError { try await chain.response(for: TransportRequest(url: server.url("/closing"), timeout: .seconds(1))) })
            #expect(error?.code == .connectionClosed, "\(String(describing: error))")
            #expect(server.requests.count == 3)
            #expect(log.timeouts == [.seconds(1), .milliseconds(800), .milliseconds(400)])
            #expect(clock.sleeps == [.milliseconds(200), .milliseconds(400)])
        }
    }

    // MARK: Cancellation

    @Test func cancellingWhileWaitingOnTheSystemClockThrowsCancelled() async throws {
        try await withServer({ _ in .text("later", status: 503, headers: [("Retry-After", "30")]) }) { server, session in
            let log = RetryAttemptLog()
            let provider = Provider<Local>(session: session, middleware: [RetryMiddleware(clock: .system), RecordAttempts(log: log)])
            let target = Local(server, "/slow")
            let task = Task { try await provider.request(target) }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            task.cancel()
            let result = await task.result
            guard case .failure(let error) = result else {
                Issue.record("expected a failure, got \(result)")
                return
            }
            let failure = Self.transportError(error as? CurlewError)
            #expect(failure?.code == .cancelled, "\(error)")
            #expect(server.statistics.requestsReceived == 1)
            #expect(log.attempts == [1])
        }
    }

    @Test func cancellingDuringTheRetryAfterWaitEndsItAtOnce() async throws {
        try await withServer({ _ in .text("later", status: 503, headers: [("Retry-After", "30")]) }) { server, session in
            let clock = ObservedSystemClock()
            let log = RetryAttemptLog()
            let provider = Provider<Local>(session: session, middleware: [RetryMiddleware(clock: clock), RecordAttempts(log: log)])
            let target = Local(server, "/slow")
            let task = Task { try await provider.request(target) }
            #expect(await eventually { clock.requested == [.seconds(30)] })
            task.cancel()
            let result = await task.result
            guard case .failure(let error) = result else {
                Issue.record("expected a failure, got \(result)")
                return
            }
            let failure = Self.transportError(error as? CurlewError)
            #expect(failure == TransportError(.cancelled, message: "the task was cancelled", url: server.url("/slow"), method: "GET"))
            #expect((error as? CurlewError)?.isCancellation == true)
            #expect(server.statistics.requestsReceived == 1)
            #expect(log.attempts == [1])
            #expect(clock.requested == [.seconds(30)])
        }
    }

    // MARK: Bodies

    @Test func aNonReplayableStreamBodyIsNeverRetriedAndFailsTyped() async throws {
        try await withServer({ _ in Self.busy }) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let chain = Self.chain(session, clock: clock, log: log)
            let body = TransportRequest.Body.stream(length: 7) { writer in try await writer.write("payload") }
            #expect(body.isReplayable == false)
            let error = await #expect(throws: CurlewError.self) {
                try await chain.response(for: TransportRequest(url: server.url("/upload"), method: .put, body: body))
            }
            #expect(
                Self.transportError(error)
                    == TransportError(
                        .bodyNotReplayable,
                        message: "the request would be retried after status 503, but its body is a stream that cannot be sent again",
                        url: server.url("/upload"), method: "PUT"))
            #expect(server.requests.count == 1)
            #expect(server.requests.first?.bodyText == "payload")
            #expect(log.attempts == [1])
            #expect(clock.sleeps == [])
        }
    }

    @Test func aOneShotSequenceBodyIsNeverRetriedAfterAFailureAndCarriesIt() async throws {
        // Nothing listens on the port: a failure that proves the request was not processed, retried for a
        // PUT whose body could be sent again.
        try await Self.withSession { session in
            await withRefusingPort { port in
                let clock = TestClock()
                let log = RetryAttemptLog()
                let chain = Self.chain(session, clock: clock, log: log)
                let chunks = Self.payloadChunks()
                let body = TransportRequest.Body.sequence(chunks, length: 7)
                #expect(body.isReplayable == false)
                let error = await #expect(throws: CurlewError.self) {
                    try await chain.response(for: TransportRequest(url: "http://127.0.0.1:\(port)/upload", method: .put, body: body))
                }
                let failure = Self.transportError(error)
                #expect(failure?.code == .bodyNotReplayable)
                #expect(
                    failure?.message
                        == "the request would be retried after a transport failure (cannotConnect), but its body is a stream that cannot be sent again"
                )
                #expect((failure?.underlying as? TransportError)?.code == .cannotConnect)
                #expect(log.attempts == [1])
                #expect(clock.sleeps == [])
            }
        }
    }

    @Test func aOneShotSequenceBodyWithAStatusNotRetriedIsReturned() async throws {
        try await withServer({ _ in .text("created", status: 201) }) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let chain = Self.chain(session, clock: clock, log: log)
            let chunks = Self.payloadChunks()
            let response = try await chain.response(
                for: TransportRequest(url: server.url("/upload"), method: .put, body: .sequence(chunks, length: 7)))
            #expect(response.status.code == 201)
            #expect(server.requests.map(\.bodyText) == ["payload"])
            #expect(log.attempts == [1])
        }
    }

    @Test func aReplayableStreamBodyIsRetriedWithTheSameBytes() async throws {
        try await withServer(Self.failing(2, with: Self.busy)) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let chain = Self.chain(session, clock: clock, log: log)
            let body = TransportRequest.Body.stream(length: 7, replayable: true) { writer in try await writer.write("payload") }
            let response = try await chain.response(for: TransportRequest(url: server.url("/upload"), method: .put, body: body))
            #expect(response.status.code == 200)
            #expect(server.requests.map(\.bodyText) == ["payload", "payload", "payload"])
            #expect(log.attempts == [1, 2, 3])
            #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100)])
        }
    }

    // MARK: Handlers

    @Test func theChainsHandlerRunsOnceForTheFinalResponse() async throws {
        try await withServer(Self.failing(2, with: .text("busy body", status: 503))) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let chain = Self.chain(session, clock: clock, log: log)
            let calls = Locked<[Int]>([])
            let (status, text) = try await chain.perform(TransportRequest(url: server.url("/h"))) {
                head, body throws(CurlewError) -> (Int, String) in
                calls.withLock { $0.append(head.status.code) }
                do throws(TransportError) {
                    return (head.status.code, Self.text(try await body.collect(upTo: 1 << 20)))
                } catch {
                    throw .transport(error)
                }
            }
            #expect(status == 200)
            #expect(text == "ok")
            #expect(calls.withLock { $0 } == [200])
            #expect(server.requests.count == 3)
            #expect(log.attempts == [1, 2, 3])
        }
    }

    @Test func theChainsHandlerSeesTheLastFailureOnceWhenAllAttemptsFail() async throws {
        try await withServer({ _ in .text("busy body", status: 503) }) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let chain = Self.chain(session, clock: clock, log: log)
            let calls = Locked(0)
            let (status, text) = try await chain.perform(TransportRequest(url: server.url("/h")), context: MiddlewareContext(attempt: 5)) {
                head, body throws(CurlewError) -> (Int, String) in
                calls.withLock { $0 += 1 }
                do throws(TransportError) {
                    return (head.status.code, Self.text(try await body.collect(upTo: 1 << 20)))
                } catch {
                    throw .transport(error)
                }
            }
            #expect(status == 503)
            #expect(text == "busy body")
            #expect(calls.withLock { $0 } == 1)
            #expect(server.requests.count == 3)
            // The attempt counts on from the caller's context.
            #expect(log.attempts == [5, 6, 7])
        }
    }

    @Test func aStreamingProvidersHandlerRunsOnceForTheFinalResponse() async throws {
        try await withServer(Self.failing(2, with: .text("busy body", status: 503))) { server, session in
            let clock = TestClock()
            let log = RetryAttemptLog()
            let provider = Self.provider(session, clock: clock, log: log)
            let calls = Locked<[Int]>([])
            let (status, text) = try await provider.stream(Local(server, "/s")) { response, body in
                calls.withLock { $0.append(response.statusCode) }
                return (response.statusCode, Self.text(try await body.collect(upTo: 1 << 20)))
            }
            #expect(status == 200)
            #expect(text == "ok")
            #expect(calls.withLock { $0 } == [200])
            #expect(server.requests.count == 3)
            #expect(log.attempts == [1, 2, 3])
            #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100)])
        }
    }
}
