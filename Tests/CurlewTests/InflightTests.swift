// Curlew — identical GET requests in flight share one transfer; cancellation is per caller.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

@Suite struct InflightTests {
    static let slow: LocalHTTPServer.Handler = { request in
        request.path == "/hang" ? .hang : .delayed(.milliseconds(300), .text("shared \(request.uri)"))
    }

    @Test func identicalGETsShareOneTransfer() async throws {
        try await withServer(Self.slow) { server, session in
            let provider = Provider<Local>(session: session, trackInflights: true)
            let target = Local(server, "/item")
            let bodies = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<5 { group.addTask { try await provider.request(target).data.text } }
                var all: [String] = []
                for try await body in group { all.append(body) }
                return all
            }
            #expect(bodies == Array(repeating: "shared /item", count: 5))
            #expect(server.statistics.requestsReceived == 1)
            #expect(await provider.inflightCount == 0)
        }
    }

    @Test func differentRequestsAndPOSTsAreNotShared() async throws {
        try await withServer(Self.slow) { server, session in
            let provider = Provider<Local>(session: session, trackInflights: true)
            async let a = provider.request(Local(server, "/a"))
            async let b = provider.request(Local(server, "/b"))
            async let c = provider.request(Local(server, "/a", method: .post))
            async let d = provider.request(Local(server, "/a", method: .post))
            _ = try await (a, b, c, d)
            #expect(server.statistics.requestsReceived == 4)
        }
    }

    @Test func cancellingOneCallerLeavesTheOthers() async throws {
        try await withServer(Self.slow) { server, session in
            let provider = Provider<Local>(session: session, trackInflights: true)
            let target = Local(server, "/item")
            let tasks = (0..<3).map { _ in Task { try await provider.request(target).data.text } }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            tasks[0].cancel()
            #expect(await curlewError { try await tasks[0].value }?.isCancellation == true)
            let observed1 = try await tasks[1].value
            #expect(observed1 == "shared /item")
            let observed2 = try await tasks[2].value
            #expect(observed2 == "shared /item")
            #expect(server.statistics.requestsReceived == 1)
        }
    }

    @Test func whenEveryCallerCancelsTheTransferIsCancelled() async throws {
        try await withServer(Self.slow) { server, session in
            let provider = Provider<Local>(session: session, trackInflights: true)
            let target = Local(server, "/hang")
            let tasks = (0..<3).map { _ in Task { try await provider.request(target) } }
            #expect(await eventually { server.statistics.requestsReceived == 1 })
            for task in tasks { task.cancel() }
            for task in tasks { #expect(await curlewError { try await task.value }?.isCancellation == true) }
            #expect(await eventually { server.statistics.connectionsClosed == 1 })
            #expect(await eventually { session.statistics.cancelledTransfers == 1 })
        }
    }
}
