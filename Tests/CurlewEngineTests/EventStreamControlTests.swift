// Curlew — an event stream observed and stopped from outside its reading task, against sse_server.py:
// comments and reconnections reported between the events, `close()` from another task (while reading
// and while waiting to reconnect), and one error shape for cancellation.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

private func newKey() -> String { UUID().uuidString }

/// A policy whose own reconnection time keeps reconnects out of a test's bounds unless the server's
/// `retry` or the test says otherwise; a fixed backoff.
private func policy(reconnectionTime: Duration = .seconds(60)) -> EventStreamPolicy {
    EventStreamPolicy(
        reconnectionTime: reconnectionTime,
        backoff: Backoff(base: .milliseconds(10), cap: .milliseconds(20), jitter: .none, resetAfter: .seconds(30)))
}

@Suite struct EventStreamControlTests {
    /// `activity` reports comments in their places and a reconnection with its cause, delay, attempt and
    /// id before the events of the next attempt; iterating the events alone yields only events.
    @Test(arguments: Wire.allCases)
    func activityReportsCommentsAndReconnections(wire: Wire) async throws {
        try await withSSEServerAndSession(wire) { server, session in
            let key = newKey()
            let plan = CommentsAndReconnection.plan
            let stream = session.events(for: TransportRequest(url: server.url(key: key, plan: plan)), policy: policy())
            let reading = await readEvents(stream.activity, count: 5)
            #expect(reading.error == nil)
            #expect(reading.events == CommentsAndReconnection.activity)
            // The events alone, from a new iteration of the same stream (the plan's next attempt).
            let key2 = newKey()
            let events = session.events(for: TransportRequest(url: server.url(key: key2, plan: plan)), policy: policy())
            let plain = await readEvents(events, count: 2)
            #expect(plain.events.map(\.data) == ["one", "two"])
        }
    }

    /// A failed connection is reported with its transport failure and the backoff added to the delay.
    @Test func aReconnectionAfterAFailureSaysWhy() async throws {
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let plan = SSEPlan([.noAnswer, .events("data: back\n\n", end: .silent)])
            let stream = session.events(
                for: TransportRequest(url: server.url(key: key, plan: plan)), policy: policy(reconnectionTime: .milliseconds(20)))
            let reading = await readEvents(stream.activity, count: 2)
            // 20 ms, and the first backoff step of 10 ms.
            expectReconnectionAfterAFailedConnection(reading, delay: .milliseconds(30))
        }
    }

    /// `close()` from another task ends an iteration waiting for its next event: it returns nil (no
    /// error), and the server sees its client go.
    @Test(arguments: Wire.allCases)
    func closeEndsAnIterationFromAnotherTask(wire: Wire) async throws {
        try await withSSEServerAndSession(wire) { server, session in
            let key = newKey()
            let plan = SSEPlan([.events("data: one\n\n", end: .silent)])
            let stream = session.events(for: TransportRequest(url: server.url(key: key, plan: plan)), policy: policy())
            let seen = Locked(0)
            let reading = Task { () -> (events: [String], error: EventStreamError?) in
                var events: [String] = []
                do {
                    for try await event in stream {
                        events.append(event.data)
                        seen.withLock { $0 += 1 }
                    }
                } catch {
                    return (events, error as? EventStreamError)
                }
                return (events, nil)
            }
            #expect(await eventually(within: 20) { seen.withLock { $0 } == 1 })
            stream.close()
            let result = await reading.value
            #expect(result.events == ["one"])
            #expect(result.error == nil)
            let records = try await server.records(key) { $0.first?.outcome != nil }
            #expect(records.map(\.outcome) == ["client-gone"])
            // Iterations started after close() end at once.
            let after = await readEvents(stream, count: 1)
            #expect(after.ended && after.events.isEmpty)
        }
    }

    /// `close()` during the wait before a reconnection (60 s here) ends the iteration without that wait.
    @Test func closeEndsTheReconnectionWait() async throws {
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let plan = SSEPlan([.events("data: one\n\n", end: .close), .events("data: never\n\n", end: .silent)])
            let stream = session.events(for: TransportRequest(url: server.url(key: key, plan: plan)), policy: policy())
            let done = Locked(false)
            let reading = Task { () -> [String] in
                var events: [String] = []
                let activity = stream.activity
                do {
                    for try await item in activity {
                        if case .event(let event) = item { events.append(event.data) }
                        if case .reconnecting = item { stream.close() }
                    }
                } catch {
                    events.append("error: \(error)")
                }
                done.withLock { $0 = true }
                return events
            }
            // Fails only by the bound: without close() the wait lasts 60 s.
            #expect(await eventually(within: 20) { done.withLock { $0 } })
            reading.cancel()
            #expect(await reading.value == ["one"])
            let records = try await server.records(key)
            #expect(records.count == 1)
        }
    }

    /// Cancelling the reading task throws the same shape from a session's stream and is recognised the
    /// same way: `EventStreamError.transport` with the code `cancelled`, `isCancellation` true.
    @Test func cancellationHasOneShape() async throws {
        try await withSSEServerAndSession { server, session in
            let key = newKey()
            let plan = SSEPlan([.events("data: one\n\n", end: .silent)])
            let stream = session.events(for: TransportRequest(url: server.url(key: key, plan: plan)), policy: policy())
            let seen = Locked(false)
            let reading = Task { () -> EventStreamError? in
                do {
                    for try await _ in stream { seen.withLock { $0 = true } }
                } catch {
                    return error as? EventStreamError
                }
                return nil
            }
            #expect(await eventually(within: 20) { seen.withLock { $0 } })
            reading.cancel()
            let error = await reading.value
            #expect(error?.isCancellation == true, "\(String(describing: error))")
            guard case .transport(let transport) = error else {
                Issue.record("expected .transport, got \(String(describing: error))")
                return
            }
            #expect(transport.code == .cancelled)
        }
    }
}
