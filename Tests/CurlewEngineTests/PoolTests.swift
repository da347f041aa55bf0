// Curlew — the bounded connection pool and its admission queue, against real servers on loopback.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// Serialized: several tests depend on timeouts firing while a request waits (total timeout), and the
/// heavy one would otherwise share two cores with them. The time limit turns an engine that never ends
/// a request (a queued timeout that never fires, a cancelled request that stays queued) into a failure
/// instead of a hang.
@Suite(.serialized, .timeLimit(.minutes(2))) struct PoolTests {
    @Test func aHostNeverGetsMoreConnectionsThanItsLimit() async throws {
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 4
        let handler: @Sendable (ServerRequest) async -> ServerReply = { request in
            .delayed(.milliseconds(50), .text("reply \(request.query["n"] ?? "?")"))
        }
        try await withServerAndSession(configuration: configuration, handler: handler) { server, session in
            let (bodies, engine) = try await Self.sampling(session) {
                try await withThrowingTaskGroup(of: (Int, Int, String).self) { group in
                    for n in 0..<40 {
                        group.addTask {
                            let response = try await session.execute(TransportRequest(url: server.url("/item?n=\(n)")))
                            return (n, response.status.code, response.body.text)
                        }
                    }
                    var all: [(Int, Int, String)] = []
                    for try await result in group { all.append(result) }
                    return all
                }
            }
            // The engine's own admission, not only libcurl's backstop on connections per host.
            #expect(engine.peakActive <= 4)
            #expect(engine.peakQueued > 0)
            #expect(bodies.count == 40)
            for (n, status, body) in bodies {
                #expect(status == 200)
                #expect(body == "reply \(n)")
            }
            let served = server.statistics
            #expect(served.requestsReceived == 40)
            #expect(served.peakConnectionsOpen <= 4)
            #expect(served.connectionsAccepted <= 4)
            // The limit is used, not just respected: the 40 submissions arrive well within the first
            // 50 ms reply, so the first four run side by side on four connections.
            #expect(served.peakConnectionsOpen == 4)
            let statistics = await Self.settledStatistics(of: session)
            #expect(statistics.peakOpenConnections <= 4)
            #expect(statistics.connectionsOpened == served.connectionsAccepted)
            #expect(statistics.completedTransfers == 40)
            #expect(statistics.queuedTransfers == 0)
            #expect(statistics.activeTransfers == 0)
        }
    }

    @Test func aSaturatedHostDoesNotDelayAnother() async throws {
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 2
        try await withServerAndSession(configuration: configuration, handler: { _ in .hang }) { hostA, session in
            try await withServer(handler: { _ in .text("from B") }) { hostB in
                // Two requests fill A's limit and hang; three more wait behind them.
                let running = (0..<2).map { _ in Self.request(hostA.url("/running"), on: session) }
                #expect(await eventually { hostA.statistics.requestsReceived == 2 })
                let queued = (0..<3).map { _ in Self.request(hostA.url("/queued"), on: session) }
                #expect(await eventually { session.statistics.queuedTransfers == 3 })

                let response = try await session.execute(TransportRequest(url: hostB.url("/"), timeout: .seconds(20)))
                // A's requests hang for good, so B waiting behind them would never be answered (its
                // total timeout would fail it instead).
                #expect(response.status.code == 200)
                #expect(response.body.text == "from B")

                // A is still exactly as it was: two hanging, three waiting.
                let hosts = await session.hostStatistics()
                let a = hosts.first { $0.host == hostA.baseURL }
                #expect(a?.queuedRequests == 3)
                #expect(a?.runningRequests == 2)
                #expect(a?.openConnections == 2)
                let b = hosts.first { $0.host == hostB.baseURL }
                #expect(b?.queuedRequests == 0)
                #expect(b?.runningRequests == 0)
                #expect(hostA.statistics.requestsReceived == 2)

                // The waiting ones first, so none of them is admitted when a running one ends.
                for task in queued { task.cancel() }
                for task in queued { #expect(await task.value?.code == .cancelled) }
                for task in running { task.cancel() }
                for task in running { #expect(await task.value?.code == .cancelled) }
                #expect(hostA.statistics.requestsReceived == 2)
                let statistics = await Self.settledStatistics(of: session)
                #expect(statistics.cancelledTransfers == 5)
                #expect(statistics.queuedTransfers == 0)
                #expect(statistics.activeTransfers == 0)
            }
        }
    }

    @Test func cancellingAQueuedRequestRemovesItAtOnce() async throws {
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 1
        let gate = Gate()
        defer { gate.open() }
        try await withServerAndSession(configuration: configuration, handler: Self.gated(by: gate)) { server, session in
            let first = Task { try await session.execute(TransportRequest(url: server.url("/first"))) }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            let second = Self.request(server.url("/second"), on: session)
            #expect(await eventually { session.statistics.queuedTransfers == 1 })

            second.cancel()
            let error = await second.value
            // At once: it ended while the request ahead of it is still held at the server (the gate
            // opens only below), so waiting for its turn would never end.
            #expect(error?.code == .cancelled)
            #expect(!gate.isOpen)
            let statistics = await Self.settledStatistics(of: session)
            #expect(statistics.queuedTransfers == 0)
            #expect(statistics.activeTransfers == 1)
            #expect(statistics.cancelledTransfers == 1)

            gate.open()
            #expect(try await first.value.body.text == "/first")
            // FIFO with one connection: had the cancelled request stayed queued, the server would get it
            // before this one.
            let next = try await session.execute(TransportRequest(url: server.url("/next")))
            #expect(next.body.text == "/next")
            #expect(server.requests.map(\.path) == ["/first", "/next"])
            #expect(server.statistics.connectionsAccepted == 1)
        }
    }

    @Test func aThousandQueuedRequestsCancelledTogetherAllEndCancelled() async throws {
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 1
        let gate = Gate()
        defer { gate.open() }
        try await withServerAndSession(configuration: configuration, handler: Self.gated(by: gate)) { server, session in
            let first = Task { try await session.execute(TransportRequest(url: server.url("/first"))) }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            let queued = (0..<1000).map { n in Self.request(server.url("/queued?n=\(n)"), on: session) }
            #expect(await eventually { session.statistics.queuedTransfers == 1000 })

            for task in queued { task.cancel() }
            var codes: [TransportError.Code?] = []
            for task in queued { codes.append(await task.value?.code) }
            #expect(codes.count == 1000)
            #expect(codes.allSatisfy { $0 == .cancelled })
            let statistics = await Self.settledStatistics(of: session)
            #expect(statistics.queuedTransfers == 0)
            #expect(statistics.cancelledTransfers == 1000)
            #expect(statistics.activeTransfers == 1)
            let hosts = await session.hostStatistics()
            #expect(hosts.first { $0.host == server.baseURL }?.queuedRequests == 0)

            gate.open()
            #expect(try await first.value.body.text == "/first")
            let next = try await session.execute(TransportRequest(url: server.url("/next")))
            #expect(next.body.text == "/next")
            #expect(server.requests.map(\.path) == ["/first", "/next"])
            #expect(server.statistics.connectionsAccepted == 1)
        }
    }

    @Test func theTotalTimeoutExpiresWhileQueued() async throws {
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 1
        let gate = Gate()
        defer { gate.open() }
        try await withServerAndSession(configuration: configuration, handler: Self.gated(by: gate)) { server, session in
            let first = Task { try await session.execute(TransportRequest(url: server.url("/first"))) }
            #expect(await eventually { server.statistics.requestsReceived == 1 })

            let error = await transportError {
                try await session.execute(TransportRequest(url: server.url("/late"), timeout: .milliseconds(300)))
            }
            #expect(error?.code == .timedOut)
            #expect(error?.timeout == .total)
            #expect(error?.curlCode == nil)
            #expect(error?.message == "the total timeout of 0.3 seconds expired")
            #expect(error?.url == server.url("/late"))
            let statistics = await Self.settledStatistics(of: session)
            #expect(statistics.queuedTransfers == 0)
            #expect(statistics.activeTransfers == 1)

            gate.open()
            #expect(try await first.value.body.text == "/first")
            let next = try await session.execute(TransportRequest(url: server.url("/next")))
            #expect(next.body.text == "/next")
            #expect(server.requests.map(\.path) == ["/first", "/next"])
        }
    }

    /// Found by this suite: a request whose total timeout expires in the queue is not counted in
    /// `failedTransfers` (the loop's `.fail` action only counts cancellations), while the same timeout on
    /// a running transfer is. `SessionStatistics.failedTransfers` is documented as "transfers that ended
    /// with an error other than cancellation". Engine code is left unchanged; this test stays red until
    /// the engine is fixed.
    @Test func aRequestTimedOutInTheQueueCountsAsFailed() async throws {
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 1
        let gate = Gate()
        defer { gate.open() }
        try await withServerAndSession(configuration: configuration, handler: Self.gated(by: gate)) { server, session in
            let first = Task { try await session.execute(TransportRequest(url: server.url("/first"))) }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            let error = await transportError {
                try await session.execute(TransportRequest(url: server.url("/late"), timeout: .milliseconds(100)))
            }
            #expect(error?.timeout == .total)
            let statistics = await Self.settledStatistics(of: session)
            #expect(statistics.queuedTransfers == 0)
            #expect(statistics.failedTransfers == 1, "a queued request's total timeout is a failure")
            gate.open()
            _ = try await first.value
            #expect(session.statistics.completedTransfers == 1)
        }
    }

    @Test func timeSpentQueuedCountsAgainstTheTotalTimeout() async throws {
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 1
        let gate = Gate()
        defer { gate.open() }
        let answered = Locked(0)
        let handler: @Sendable (ServerRequest) async -> ServerReply = { request in
            // The first request is held until the gate opens, then answered at once; the others take 200 ms.
            if request.path == "/first" {
                await gate.wait()
            } else {
                try? await Task.sleep(for: .milliseconds(200))
            }
            answered.withLock { $0 += 1 }
            return .text(request.path)
        }
        try await withServerAndSession(configuration: configuration, handler: handler) { server, session in
            // On its own, 2 s is ample for a 200 ms answer.
            let alone = try await session.execute(TransportRequest(url: server.url("/alone"), timeout: .seconds(2)))
            #expect(alone.body.text == "/alone")

            let first = Task { try await session.execute(TransportRequest(url: server.url("/first"))) }
            #expect(await eventually { server.statistics.requestsReceived == 2 })
            let queued = Self.request(server.url("/queued"), timeout: .seconds(2), on: session)
            #expect(await eventually { session.statistics.queuedTransfers == 1 })
            // Queued for at least 1.9 s, then 200 ms at the server: over its 2 s however loaded the
            // machine (a deadline counted from admission would leave it ample time).
            try await Task.sleep(for: .milliseconds(1900))
            gate.open()
            let error = await queued.value
            #expect(error?.code == .timedOut)
            #expect(error?.timeout == .total)
            #expect(try await first.value.body.text == "/first")
            // The server most likely got it (it timed out running, after its wait) and still answers
            // the aborted transfer: let every answer finish before the server stops.
            #expect(await eventually { answered.withLock { $0 } == server.statistics.requestsReceived })
        }
    }

    @Test func queueTimeIsReportedInTheTimings() async throws {
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 1
        let gate = Gate()
        defer { gate.open() }
        try await withServerAndSession(configuration: configuration, handler: Self.gated(by: gate)) { server, session in
            let first = Task { try await session.execute(TransportRequest(url: server.url("/first"))) }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            let second = Task { try await session.execute(TransportRequest(url: server.url("/second"))) }
            #expect(await eventually { session.statistics.queuedTransfers == 1 })
            // The second request is queued from before this sleep until after it: at least 300 ms (a
            // loaded machine can only lengthen the wait).
            try await Task.sleep(for: .milliseconds(300))
            gate.open()
            let (unqueued, queued) = (try await first.value, try await second.value)
            #expect(unqueued.body.text == "/first")
            #expect(queued.body.text == "/second")
            #expect(queued.timings.queued >= .milliseconds(300))
            // The waiting one went out over the connection the first one opened.
            #expect(unqueued.connectionReused == false)
            #expect(queued.connectionReused == true)
            #expect(server.statistics.connectionsAccepted == 1)
            #expect(server.requests.map(\.path) == ["/first", "/second"])
        }
    }

    @Test func hostStatisticsListEveryHostWithItsQueueAndConnections() async throws {
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 2
        let gateA = Gate()
        let gateB = Gate()
        defer {
            gateA.open()
            gateB.open()
        }
        try await withServerAndSession(configuration: configuration, handler: Self.gated(by: gateA)) { hostA, session in
            try await withServer(handler: Self.gated(by: gateB)) { hostB in
                let tasksA = (0..<5).map { n in Task { try await session.execute(TransportRequest(url: hostA.url("/a\(n)"))) } }
                let tasksB = (0..<3).map { n in Task { try await session.execute(TransportRequest(url: hostB.url("/b\(n)"))) } }
                #expect(await eventually {
                    hostA.statistics.requestsReceived == 2 && hostB.statistics.requestsReceived == 2
                        && session.statistics.queuedTransfers == 4
                })

                let during = await session.hostStatistics()
                #expect(during.map(\.host).sorted() == [hostA.baseURL, hostB.baseURL].sorted())
                let a = during.first { $0.host == hostA.baseURL }
                #expect(a?.queuedRequests == 3)
                #expect(a?.runningRequests == 2)
                #expect(a?.openConnections == 2)
                #expect(a?.peakOpenConnections == 2)
                let b = during.first { $0.host == hostB.baseURL }
                #expect(b?.queuedRequests == 1)
                #expect(b?.runningRequests == 2)
                #expect(b?.openConnections == 2)
                #expect(b?.peakOpenConnections == 2)
                #expect(session.statistics.queuedTransfers == 4)
                #expect(session.statistics.activeTransfers == 4)

                gateA.open()
                gateB.open()
                for (n, task) in tasksA.enumerated() {
                    let body = try await task.value.body.text
                    #expect(body == "/a\(n)")
                }
                for (n, task) in tasksB.enumerated() {
                    let body = try await task.value.body.text
                    #expect(body == "/b\(n)")
                }

                let after = await session.hostStatistics()
                #expect(after.count == 2)
                for server in [hostA, hostB] {
                    let entry = after.first { $0.host == server.baseURL }
                    #expect(entry?.queuedRequests == 0)
                    #expect(entry?.runningRequests == 0)
                    // Both sides keep the connections alive, so each side counts the same ones.
                    #expect(entry?.openConnections == server.statistics.connectionsOpen)
                    #expect(entry?.openConnections == 2)
                    #expect(entry?.peakOpenConnections == server.statistics.peakConnectionsOpen)
                }
                #expect(session.statistics.openConnections == 4)
            }
        }
    }

    @Test func theTotalLimitHoldsAcrossHosts() async throws {
        var configuration = SessionConfiguration()
        configuration.maxConnectionsTotal = 3
        configuration.maxConnectionsPerHost = 0
        // Requests in the three servers' handlers at once: a running transfer has at most one there.
        let inFlight = Locked((now: 0, peak: 0))
        let handler: @Sendable (ServerRequest) async -> ServerReply = { request in
            inFlight.withLock { state in
                state.now += 1
                state.peak = max(state.peak, state.now)
            }
            try? await Task.sleep(for: .milliseconds(50))
            inFlight.withLock { $0.now -= 1 }
            return .text(request.path)
        }
        try await withServers(3, handler: handler) { servers in
            let session = try CurlSession(configuration: configuration)
            do {
                let urls = (0..<30).map { n in servers[n % 3].url("/r\(n)") }
                let results = try await withThrowingTaskGroup(of: (String, String).self) { group in
                    for url in urls {
                        group.addTask { (url, try await session.execute(TransportRequest(url: url)).body.text) }
                    }
                    var all: [(String, String)] = []
                    for try await result in group { all.append(result) }
                    return all
                }
                #expect(results.count == 30)
                for (url, body) in results { #expect(url.hasSuffix(body)) }
                for server in servers { #expect(server.statistics.requestsReceived == 10) }
                #expect(inFlight.withLock { $0.peak } <= 3)
                // ... and reached: the first three submissions start together.
                #expect(inFlight.withLock { $0.peak } == 3)
                // The connections too: curl closes an idle connection before opening one over the limit.
                #expect(session.statistics.peakOpenConnections <= 3)
                #expect(session.statistics.completedTransfers == 30)
            } catch {
                await session.shutdown()
                throw error
            }
            await session.shutdown()
        }
    }

    @Test(.disabled(if: heavyTestsDisabled, "heavy: 10,000 requests"))
    func tenThousandRequestsShareTheDefaultPool() async throws {
        let handler: @Sendable (ServerRequest) async -> ServerReply = { request in
            .text(request.query["n"] ?? "?")
        }
        try await withServerAndSession(handler: handler) { server, session in
            let count = 10_000
            let (wrong, engine) = try await Self.sampling(session) {
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    for n in 0..<count {
                        group.addTask {
                            let response = try await session.execute(TransportRequest(url: server.url("/n?n=\(n)")))
                            return response.status.code == 200 && response.body.text == "\(n)"
                        }
                    }
                    var wrong = 0
                    for try await correct in group where !correct { wrong += 1 }
                    return wrong
                }
            }
            #expect(wrong == 0)
            #expect(engine.peakActive <= 64)
            #expect(engine.peakQueued > 0)
            #expect(server.statistics.requestsReceived == count)
            #expect(server.statistics.peakConnectionsOpen <= 64)
            #expect(server.statistics.connectionsAccepted <= 64)
            #expect(session.statistics.peakOpenConnections <= 64)
            #expect(session.statistics.connectionsOpened == server.statistics.connectionsAccepted)
            #expect(session.statistics.completedTransfers == count)
        }
    }

    // MARK: Helpers

    /// Runs `body` with `count` servers, and always stops them.
    func withServers<T>(
        _ count: Int, handler: @escaping @Sendable (ServerRequest) async -> ServerReply,
        _ body: ([LocalHTTPServer]) async throws -> T
    ) async throws -> T {
        var servers: [LocalHTTPServer] = []
        do {
            for _ in 0..<count { servers.append(try await LocalHTTPServer.start(handler: handler)) }
            let result = try await body(servers)
            for server in servers { try await server.shutdown() }
            return result
        } catch {
            for server in servers { try? await server.shutdown() }
            throw error
        }
    }

    /// Runs `body` with a second server, and always stops it.
    func withServer<T>(
        handler: @escaping @Sendable (ServerRequest) async -> ServerReply, _ body: (LocalHTTPServer) async throws -> T
    ) async throws -> T {
        let server = try await LocalHTTPServer.start(handler: handler)
        do {
            let result = try await body(server)
            try await server.shutdown()
            return result
        } catch {
            try await server.shutdown()
            throw error
        }
    }

    /// The session's counters once the loop has finished what it was doing. The loop resumes a caller
    /// before it stores the queued and active counts, so right after an `execute` returns they may still
    /// count that request; `hostStatistics()` is answered by the loop thread, after that store.
    static func settledStatistics(of session: CurlSession) async -> SessionStatistics {
        _ = await session.hostStatistics()
        return session.statistics
    }

    /// Runs `body` while sampling the session's running and queued counts every millisecond; returns
    /// its result and the highest counts seen.
    static func sampling<T>(
        _ session: CurlSession, during body: () async throws -> T
    ) async throws -> (T, (peakActive: Int, peakQueued: Int)) {
        let peaks = Locked((peakActive: 0, peakQueued: 0))
        let sampler = Task {
            while !Task.isCancelled {
                let statistics = session.statistics
                peaks.withLock { peaks in
                    peaks.peakActive = max(peaks.peakActive, statistics.activeTransfers)
                    peaks.peakQueued = max(peaks.peakQueued, statistics.queuedTransfers)
                }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        do {
            let result = try await body()
            sampler.cancel()
            await sampler.value
            return (result, peaks.withLock { $0 })
        } catch {
            sampler.cancel()
            throw error
        }
    }

    /// Runs a request in its own task, which ends with the error it threw (nil and an issue if none).
    static func request(_ url: String, timeout: Duration? = nil, on session: CurlSession) -> Task<TransportError?, Never> {
        Task { await transportError { try await session.execute(TransportRequest(url: url, timeout: timeout)) } }
    }

    /// A handler that holds every request until `gate` opens, then answers with its path.
    static func gated(by gate: Gate) -> @Sendable (ServerRequest) async -> ServerReply {
        { request in
            await gate.wait()
            return .text(request.path)
        }
    }
}
