// Curlew — a target's event stream observed and stopped through the provider, against sse_server.py:
// `TargetEvents.activity` (comments and reconnections between the events, plain iteration unchanged),
// `DecodedTargetEvents.close()` from another task, and the iterator's reconnection time after `retry`.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

/// `/sse` of an ``SSETestServer`` serving `plan` to the requests of `key`, as a target.
private struct StreamTarget: TargetType {
    let base: String
    let key: String
    let plan: SSEPlan

    init(_ server: SSETestServer, key: String, plan: SSEPlan) {
        base = server.url("/")
        self.key = key
        self.plan = plan
    }

    var baseURL: URL { URL(string: base) ?? URL(fileURLWithPath: "/") }
    var path: String { "/sse" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask {
        .requestParameters(parameters: ["key": .string(key), "plan": .string(plan.encoded)], encoding: URLEncoding.queryString)
    }
    var headers: [String: String]? { nil }
}

/// A policy whose own reconnection time keeps reconnects out of a test's bounds unless the server's
/// `retry` or the test says otherwise; a fixed backoff.
private func policy(reconnectionTime: Duration = .seconds(60)) -> EventStreamPolicy {
    EventStreamPolicy(
        reconnectionTime: reconnectionTime,
        backoff: Backoff(base: .milliseconds(10), cap: .milliseconds(20), jitter: .none, resetAfter: .seconds(30)))
}

private func newKey() -> String { UUID().uuidString }

/// An event's data as JSON.
private struct Word: Decodable, Sendable, Equatable {
    let word: String
}

/// Lets every attempt waiting at the gather `name` (of two) go on: a second request reaches it.
private func release(_ name: String, _ server: SSETestServer, _ session: CurlSession) async throws {
    let plan = SSEPlan([SSEAttempt([.gather(name, count: 2)], end: .finish)])
    _ = try await session.execute(TransportRequest(url: server.url(key: newKey(), plan: plan)))
}

@Suite struct ProviderEventStreamControlTests {
    /// `activity` on a target's stream reports comments in their places and a reconnection with its
    /// cause, delay, attempt and id before the events of the next attempt (which sends that id); iterating
    /// the same target's events alone yields only the events.
    @Test(arguments: Wire.allCases)
    func activityReportsCommentsAndReconnections(wire: Wire) async throws {
        try await withSSEServerAndSession(wire) { server, session in
            let provider = Provider<StreamTarget>(session: session)
            let plan = CommentsAndReconnection.plan
            let key = newKey()
            let stream = provider.events(for: StreamTarget(server, key: key, plan: plan), policy: policy())
            let reading = await readEvents(stream.activity, count: 5)
            #expect(reading.error == nil)
            #expect(reading.events == CommentsAndReconnection.activity)
            let records = try await server.records(key)
            #expect(records.map { $0.values("Last-Event-ID") } == [[], ["7"]])
            // The events alone, from the same plan under a new key.
            let events = provider.events(for: StreamTarget(server, key: newKey(), plan: plan), policy: policy())
            let plain = await readEvents(events, count: 2)
            #expect(plain.error == nil)
            #expect(plain.events == [ServerSentEvents.Event(data: "one", id: "7", retry: .milliseconds(50)), ServerSentEvents.Event(data: "two", id: "7")])
        }
    }

    /// A typed stream offers the same: its `activity` (events undecoded, comments and the reconnection in
    /// their places) and its iterator's current reconnection time, which follows the server's `retry`.
    @Test func aTypedStreamHasActivityAndReconnectionTime() async throws {
        try await withSSEServerAndSession { server, session in
            let provider = Provider<StreamTarget>(session: session)
            let plan = SSEPlan([
                .events(": hi\nretry: 40\nid: 3\ndata: {\"word\":\"one\"}\n\n", end: .close),
                .events("data: {\"word\":\"two\"}\n\n", end: .silent),
            ])
            let typed = provider.events(for: StreamTarget(server, key: newKey(), plan: plan), as: Word.self, policy: policy())
            let reading = await readEvents(typed.activity, count: 4)
            #expect(reading.error == nil)
            #expect(reading.events == [
                .comment(" hi"),
                .event(ServerSentEvents.Event(data: "{\"word\":\"one\"}", id: "3", retry: .milliseconds(40))),
                .reconnecting(EventStreamReconnection(cause: .streamEnded, delay: .milliseconds(40), attempt: 1, lastEventID: "3")),
                .event(ServerSentEvents.Event(data: "{\"word\":\"two\"}", id: "3")),
            ])
            var iterator = provider.events(for: StreamTarget(server, key: newKey(), plan: plan), as: Word.self, policy: policy())
                .makeAsyncIterator()
            #expect(iterator.reconnectionTime == .seconds(60))
            let one = try await iterator.next()
            #expect(one?.value == Word(word: "one"))
            #expect(iterator.reconnectionTime == .milliseconds(40))
            let two = try await iterator.next()
            #expect(two?.value == Word(word: "two"))
            #expect(iterator.lastEventID == "3")
        }
    }

    /// A failed connection is reported with its transport failure and the backoff added to the delay.
    @Test func aReconnectionAfterAFailureSaysWhy() async throws {
        try await withSSEServerAndSession { server, session in
            let provider = Provider<StreamTarget>(session: session)
            let plan = SSEPlan([.noAnswer, .events("data: back\n\n", end: .silent)])
            let stream = provider.events(
                for: StreamTarget(server, key: newKey(), plan: plan), policy: policy(reconnectionTime: .milliseconds(20)))
            let reading = await readEvents(stream.activity, count: 2)
            // 20 ms, and the first backoff step of 10 ms.
            expectReconnectionAfterAFailedConnection(reading, delay: .milliseconds(30))
        }
    }

    /// `activity` throws what iterating the events throws: the stream's own failure as
    /// `CurlewError.eventStream`.
    @Test func activityThrowsAsTheEventsDo() async throws {
        try await withSSEServerAndSession { server, session in
            let provider = Provider<StreamTarget>(session: session)
            let stream = provider.events(for: StreamTarget(server, key: newKey(), plan: SSEPlan([.status(404)])), policy: policy())
            let reading = await readEvents(stream.activity)
            #expect(reading.events.isEmpty)
            guard case .eventStream(let error)? = reading.error as? CurlewError else {
                Issue.record("expected CurlewError.eventStream, got \(String(describing: reading.error))")
                return
            }
            #expect(error == .unexpectedStatus(404))
        }
    }

    /// `close()` on a typed stream, from another task, ends an iteration waiting for its next event: it
    /// returns nil (no error), the server sees its client go, and an iteration started later ends at once.
    @Test(arguments: Wire.allCases)
    func closeEndsATypedIterationFromAnotherTask(wire: Wire) async throws {
        try await withSSEServerAndSession(wire) { server, session in
            let provider = Provider<StreamTarget>(session: session)
            let key = newKey()
            let plan = SSEPlan([.events("data: {\"word\": \"one\"}\n\n", end: .silent)])
            let stream = provider.events(for: StreamTarget(server, key: key, plan: plan), as: Word.self, policy: policy())
            let seen = Locked(0)
            let reading = Task { () -> (words: [Word?], error: (any Error)?) in
                var words: [Word?] = []
                do {
                    for try await event in stream {
                        words.append(event.value)
                        seen.withLock { $0 += 1 }
                    }
                } catch {
                    return (words, error)
                }
                return (words, nil)
            }
            #expect(await eventually(within: 20) { seen.withLock { $0 } == 1 })
            stream.close()
            let result = await reading.value
            #expect(result.words == [Word(word: "one")])
            #expect(result.error == nil)
            let records = try await server.records(key) { $0.first?.outcome != nil }
            #expect(records.map(\.outcome) == ["client-gone"])
            let after = await readEvents(stream, count: 1)
            #expect(after.ended)
            #expect(after.events.isEmpty)
            #expect(after.error == nil)
        }
    }

    /// `close()` on a typed stream whose first event was read and whose server has ended the first attempt
    /// (the policy waits 60 s before reconnecting) ends the iteration without that wait and without a
    /// second request.
    @Test func closeEndsATypedStreamWaitingToReconnect() async throws {
        try await withSSEServerAndSession { server, session in
            let provider = Provider<StreamTarget>(session: session)
            let key = newKey()
            let plan = SSEPlan([
                .events("data: {\"word\": \"one\"}\n\n", end: .close), .events("data: {\"word\": \"never\"}\n\n", end: .silent),
            ])
            let stream = provider.events(for: StreamTarget(server, key: key, plan: plan), as: Word.self, policy: policy())
            let done = Locked(false)
            let seen = Locked(0)
            let reading = Task { () -> [String] in
                var words: [String] = []
                do {
                    for try await event in stream {
                        words.append(event.value?.word ?? "undecodable")
                        seen.withLock { $0 += 1 }
                    }
                } catch {
                    words.append("error: \(error)")
                }
                done.withLock { $0 = true }
                return words
            }
            // close() drops events not yet read: it comes once the first one was.
            #expect(await eventually(within: 20) { seen.withLock { $0 } == 1 })
            let ended = try await server.records(key) { $0.first?.outcome != nil }
            #expect(ended.map(\.outcome) == ["closed"])
            stream.close()
            // Fails only by the bound: without close() the wait lasts 60 s.
            #expect(await eventually(within: 20) { done.withLock { $0 } })
            reading.cancel()
            let words = await reading.value
            #expect(words == ["one"])
            let records = try await server.records(key)
            #expect(records.count == 1)
        }
    }

    /// The iterator's reconnection time is the policy's until the server sends `retry`, then the server's;
    /// a `retry` that is not all digits is ignored, a later one replaces it, and it holds across a
    /// reconnection. Each part of the stream leaves the server only once the test has read the one before.
    @Test func theReconnectionTimeFollowsTheServersRetry() async throws {
        try await withSSEServerAndSession { server, session in
            let provider = Provider<StreamTarget>(session: session)
            let key = newKey()
            let first = "first-\(key)"
            let second = "second-\(key)"
            let plan = SSEPlan([
                SSEAttempt(
                    [
                        .send("retry: 50\nid: 1\ndata: one\n\n"), .gather(first, count: 2),
                        .send("retry: 9x\ndata: two\n\n"), .gather(second, count: 2),
                        .send("retry: 250\ndata: three\n\n"),
                    ],
                    end: .close),
                .events("data: four\n\n", end: .silent),
            ])
            var iterator = provider.events(for: StreamTarget(server, key: key, plan: plan), policy: policy()).makeAsyncIterator()
            #expect(iterator.reconnectionTime == .seconds(60))
            let one = try await iterator.next()
            #expect(one?.data == "one")
            #expect(iterator.reconnectionTime == .milliseconds(50))
            try await release(first, server, session)
            let two = try await iterator.next()
            #expect(two?.data == "two")
            #expect(iterator.reconnectionTime == .milliseconds(50))
            try await release(second, server, session)
            let three = try await iterator.next()
            #expect(three?.data == "three")
            #expect(iterator.reconnectionTime == .milliseconds(250))
            let four = try await iterator.next()
            #expect(four == ServerSentEvents.Event(data: "four", id: "1"))
            #expect(iterator.reconnectionTime == .milliseconds(250))
            #expect(iterator.lastEventID == "1")
            let records = try await server.records(key)
            #expect(records.map { $0.values("Last-Event-ID") } == [[], ["1"]])
        }
    }
}
