// Curlew — reading an event stream in a test: up to a number of events or its end, within a bound.

import CurlewEngine
import Testing

/// What reading an event stream gave: its events, and how the reading stopped.
package struct EventStreamReading<Element: Sendable>: Sendable {
    /// The events read, in order.
    package var events: [Element] = []
    /// Whether the sequence ended (returned nil).
    package var ended = false
    /// What the sequence threw, if it did (the cancellation that ``timedOut`` causes included).
    package var error: (any Error)?
    /// Whether the bound passed first and the reading task was cancelled.
    package var timedOut = false
}

/// Reads `events` until `count` events arrived (then leaves the iteration, which closes the stream),
/// the sequence ended or threw, or `seconds` passed (then cancels the reading task). The bound only
/// matters when a test fails.
package func readEvents<Events: AsyncSequence & Sendable>(
    _ events: Events, count: Int? = nil, within seconds: Double = 20
) async -> EventStreamReading<Events.Element> where Events.Element: Sendable {
    let reading = Task { () -> EventStreamReading<Events.Element> in
        var reading = EventStreamReading<Events.Element>()
        var iterator = events.makeAsyncIterator()
        do {
            while count.map({ reading.events.count < $0 }) ?? true {
                guard let event = try await iterator.next() else {
                    reading.ended = true
                    break
                }
                reading.events.append(event)
            }
        } catch {
            reading.error = error
        }
        return reading
    }
    let fired = Locked(false)
    let timer = Task {
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        fired.withLock { $0 = true }
        reading.cancel()
    }
    var result = await reading.value
    timer.cancel()
    result.timedOut = fired.withLock { $0 }
    return result
}

/// Expects what a stream whose first connection failed (the plan's `.noAnswer`) and whose second sent
/// `data: back` reports through `activity`: a reconnection caused by `connectionClosed`, after `delay`,
/// as attempt 1 with no event id, then the event.
package func expectReconnectionAfterAFailedConnection(
    _ reading: EventStreamReading<EventStreamActivity>, delay: Duration, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(reading.error == nil, sourceLocation: sourceLocation)
    guard reading.events.count == 2, case .reconnecting(let reconnection) = reading.events[0] else {
        Issue.record("expected a reconnection first: \(reading.events)", sourceLocation: sourceLocation)
        return
    }
    guard case .transportFailure(let failure) = reconnection.cause else {
        Issue.record("expected a transport failure: \(reconnection.cause)", sourceLocation: sourceLocation)
        return
    }
    #expect(failure.code == .connectionClosed, sourceLocation: sourceLocation)
    #expect(reconnection.delay == delay, sourceLocation: sourceLocation)
    #expect(reconnection.attempt == 1, sourceLocation: sourceLocation)
    #expect(reconnection.lastEventID == "", sourceLocation: sourceLocation)
    #expect(reading.events[1] == .event(ServerSentEvents.Event(data: "back")), sourceLocation: sourceLocation)
}

/// A stream whose first attempt sends comments around an event (with `retry: 50` and id 7) and ends,
/// and whose second sends one more event: the plan, and what its `activity` yields, the session's and
/// the provider's alike.
package enum CommentsAndReconnection {
    package static let plan = SSEPlan([
        .events(": keep-alive\nretry: 50\nid: 7\ndata: one\n\n:second\n", end: .close),
        .events("data: two\n\n", end: .silent),
    ])

    package static let activity: [EventStreamActivity] = [
        .comment(" keep-alive"),
        .event(ServerSentEvents.Event(data: "one", id: "7", retry: .milliseconds(50))),
        .comment("second"),
        .reconnecting(EventStreamReconnection(cause: .streamEnded, delay: .milliseconds(50), attempt: 1, lastEventID: "7")),
        .event(ServerSentEvents.Event(data: "two", id: "7")),
    ]
}
