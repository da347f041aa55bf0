// Curlew — many transfers at once, cancellation, shutdown and dropped sessions.

@testable import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

@Suite struct ConcurrencyTests {
    @Test(.disabled(if: heavyTestsDisabled, "heavy: thousands of sockets"))
    func thousandConcurrentRequestsAreAllCorrect() async throws {
        let handler: @Sendable (ServerRequest) async -> ServerReply = { request in
            .delayed(.milliseconds(20), .text("reply to \(request.query["n"] ?? "?")"))
        }
        try await withServerAndSession(handler: handler) { server, session in
            let results = try await withThrowingTaskGroup(of: (Int, Int, String).self) { group in
                for n in 0..<1000 {
                    group.addTask {
                        let response = try await session.execute(TransportRequest(url: server.url("/item?n=\(n)")))
                        return (n, response.status.code, response.body.text)
                    }
                }
                var all: [(Int, Int, String)] = []
                for try await result in group { all.append(result) }
                return all
            }
            #expect(results.count == 1000)
            for (n, status, body) in results {
                #expect(status == 200)
                #expect(body == "reply to \(n)")
            }
            #expect(server.statistics.requestsReceived == 1000)
            #expect(session.statistics.completedTransfers == 1000)
            #expect(session.statistics.activeTransfers == 0)
        }
    }

    @Test func cancellingInFlightRequestsClosesTheirConnections() async throws {
        let count = heavyTestsDisabled ? 50 : 500
        // Every request in flight at once: a pool as large as the burst.
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = count
        configuration.maxConnectionsTotal = count
        try await withServerAndSession(configuration: configuration, handler: { _ in .hang }) { server, session in
            let tasks = (0..<count).map { _ in
                Task { () async -> TransportError? in
                    await transportError { try await session.execute(TransportRequest(url: server.url("/hang"))) }
                }
            }
            // Generous: under the thread sanitizer, with every other suite running, arrivals take seconds.
            #expect(await eventually(within: 30) { server.statistics.requestsReceived == count })
            for task in tasks { task.cancel() }
            for task in tasks {
                let error = await task.value
                #expect(error?.code == .cancelled)
                #expect(error?.isCancellation == true)
            }
            #expect(await eventually(within: 30) { server.statistics.connectionsClosed == count })
            #expect(session.statistics.cancelledTransfers == count)
            #expect(session.statistics.activeTransfers == 0)
            // The session still serves requests afterwards.
            let after = try await LocalHTTPServer.start(handler: { _ in .text("still here") })
            let response = try await session.execute(TransportRequest(url: after.url("/")))
            #expect(response.body.text == "still here")
            try await after.shutdown()
        }
    }

    @Test func cancellationBeforeTheTransferIsRegistered() async throws {
        try await withServerAndSession(handler: { _ in .text("x") }) { server, session in
            let task = Task { () async -> TransportError? in
                // Wait until cancelled, so execute starts in an already-cancelled task.
                while !Task.isCancelled { await Task.yield() }
                return await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
            }
            task.cancel()
            let error = await task.value
            #expect(error?.code == .cancelled)
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.statistics.connectionsAccepted == 0)
            #expect(server.statistics.requestsReceived == 0)
        }
    }

    @Test func shutdownFailsRequestsInFlight() async throws {
        let server = try await LocalHTTPServer.start(handler: { _ in .hang })
        let session = try CurlSession()
        let tasks = (0..<20).map { _ in
            Task { await transportError { try await session.execute(TransportRequest(url: server.url("/"))) } }
        }
        #expect(await eventually(within: 30) { server.statistics.requestsReceived == 20 })
        await session.shutdown()
        for task in tasks { #expect(await task.value?.code == .sessionShutDown) }
        let late = await transportError { try await session.execute(TransportRequest(url: server.url("/"))) }
        #expect(late?.code == .sessionShutDown)
        #expect(await eventually(within: 30) { server.statistics.connectionsClosed == 20 })
        await session.shutdown()  // idempotent
        try await server.shutdown()
    }

    @Test func droppedSessionStopsItsThread() async throws {
        let server = try await LocalHTTPServer.start(handler: { _ in .text("x") })
        func useAndDrop() async throws -> Int32 {
            let session = try CurlSession()
            _ = try await session.execute(TransportRequest(url: server.url("/")))
            let thread = session.loopThreadID
            #expect(threadIsAlive(thread))
            return thread
        }
        var threads: [Int32] = []
        for _ in 0..<5 { threads.append(try await useAndDrop()) }
        #expect(Set(threads).count == 5)
        // Dropping the last reference shut each loop down and joined its thread. (pthread_join returns
        // when the kernel clears the thread id, a moment before /proc stops listing the task.)
        for thread in threads { #expect(await eventually { !threadIsAlive(thread) }) }
        #expect(await eventually { server.statistics.connectionsOpen == 0 })
        try await server.shutdown()
    }
}
