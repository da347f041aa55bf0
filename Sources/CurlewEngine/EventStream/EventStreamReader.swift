// Curlew — an event stream as its reader sees it: one connection attempt after another, each handing
// its bytes to the parser on the reading task, with the waits, statuses and failures of reconnection.

import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The state of one iteration of an event stream; used only by the task that iterates it.
package final class EventStreamReader {
    let connector: EventStreamConnector
    let policy: EventStreamPolicy
    var parser: EventStreamParser
    var events: [ServerSentEvents.Event] = []
    var delivered = 0
    /// The running attempt when its transfer was submitted by the reader (a session's), which follows
    /// its redirects; `directHead`: its head is still to come.
    var direct: EventStreamExchange?
    var directHead = false
    /// The running attempt when the connector opened it (a provider's stages, or a request the session
    /// cannot submit directly): its body, detached from the call that opened it, and its head until
    /// taken in.
    var opened: DetachedResponseBody.Iterator?
    var openedHead: ResponseHead?
    /// An attempt that failed before its head.
    var failedOpen: (any Error)?
    /// The direct attempt's head that is a redirect not followed, to take in as the answer.
    var unfollowedRedirect: ResponseHead?
    /// Attempts opened so far, and the id the last one resumed after.
    var attempts = 0
    var attemptLastEventID = ""
    /// When the running attempt's head was accepted (nil: not accepted).
    var acceptedAt: ContinuousClock.Instant?
    /// Failed attempts since the last accepted head.
    var consecutiveFailures = 0
    var backoff: BackoffState
    /// The wait before the next attempt.
    var wait: Duration = .zero
    var finished = false
    /// Ends the stream from other tasks (``EventStreamCloser``), with this reader's token.
    let closer: EventStreamCloser
    let closerToken: Int
    /// What an observed stream reports, in order (nil: not observed; events then wait in `events`).
    var activities: EventStreamActivityQueue?

    package init(
        connector: EventStreamConnector, policy: EventStreamPolicy, lastEventID: String,
        closer: EventStreamCloser = EventStreamCloser(), observes: Bool = false
    ) {
        self.connector = connector
        self.policy = policy
        self.closer = closer
        closerToken = closer.register()
        parser = EventStreamParser(maxLineLength: policy.maxLineLength, maxEventSize: policy.maxEventSize)
        parser.lastEventID = lastEventID
        if observes {
            parser.comments = []
            activities = EventStreamActivityQueue()
        }
        backoff = BackoffState(policy.backoff)
    }

    deinit {
        closer.unregister(closerToken)
        direct?.close()
    }

    /// The id a reconnection would send now.
    package var lastEventID: String { parser.lastEventID }

    /// The wait before a reconnection as it stands: the server's last `retry`, else the policy's time (a
    /// failed attempt adds the backoff to it).
    package var reconnectionTime: Duration { parser.reconnectionTime ?? policy.reconnectionTime }

    /// The next event; nil when the stream ended for good. Throws ``EventStreamError``, or what the
    /// connector threw that is not a transport failure it may reconnect after.
    ///
    /// Everything but the waits happens in ``step()``, synchronously: a stream spends its life suspended
    /// here, and an async function's frame holds every value any of its paths keeps across a wait, so
    /// this one keeps (and its task's allocator retains) only a few hundred bytes.
    package nonisolated(nonsending) func next() async throws -> ServerSentEvents.Event? {
        while true {
            switch try step() {
            case .event(let event): return event
            case .activity(let activity): if case .event(let event) = activity { return event }
            case .ended: return nil
            case .open: try await open()
            case .read(let exchange): await exchange.wait()
            case .redirect(let exchange, let head): await follow(head, of: exchange)
            case .readOpened(let body): await body.waitForBytes()
            }
        }
    }

    /// The next activity of an observed stream (see ``EventStreamActivity``); nil when it ended for good.
    /// Throws as ``next()``.
    package nonisolated(nonsending) func nextActivity() async throws -> EventStreamActivity? {
        while true {
            switch try step() {
            case .event(let event): return .event(event)
            case .activity(let activity): return activity
            case .ended: return nil
            case .open: try await open()
            case .read(let exchange): await exchange.wait()
            case .redirect(let exchange, let head): await follow(head, of: exchange)
            case .readOpened(let body): await body.waitForBytes()
            }
        }
    }

    /// What ``next()`` does after a synchronous step.
    enum Step {
        case event(ServerSentEvents.Event)
        /// An observed stream's next activity.
        case activity(EventStreamActivity)
        case ended
        /// Start the next attempt (after the reconnection wait).
        case open
        /// Wait for the direct attempt's head or bytes.
        case read(EventStreamExchange)
        /// Wait for the opened attempt's bytes.
        case readOpened(DetachedResponseBody)
        /// The direct attempt's head is a redirect: follow it (the exchange sends the next hop).
        case redirect(EventStreamExchange, ResponseHead)
    }

    /// Hands out a parsed event, or takes in what the running attempt has (its head, bytes, end or
    /// failure) until there is an event or a wait.
    @inline(never)
    func step() throws -> Step {
        while true {
            if closer.isClosed, !finished {
                close()
                return .ended
            }
            if let event = buffered() { return .event(event) }
            if let activity = activities?.next() { return .activity(activity) }
            if finished {
                guard let error = pendingFailure else { return .ended }
                pendingFailure = nil
                throw error
            }
            if let error = failedOpen {
                failedOpen = nil
                try take(.failed(error))
            } else if let head = openedHead {
                openedHead = nil
                try take(.head(head))
            } else if var body = opened {
                let item: EventStreamItem
                do {
                    defer { opened = body }
                    switch try body.poll() {
                    case .chunk(let chunk): item = .bytes(chunk)
                    case .end: item = .end
                    case .pending: return .readOpened(body.owner)
                    }
                } catch {
                    item = .failed(error)
                }
                try take(item)
            } else if let direct {
                let item: EventStreamItem
                do {
                    if directHead {
                        let head: ResponseHead
                        if let unfollowed = unfollowedRedirect {
                            head = unfollowed
                            unfollowedRedirect = nil
                        } else {
                            guard let polled = try direct.pollHead() else { return .read(direct) }
                            if (300..<400).contains(polled.status.code), polled.hasLocation { return .redirect(direct, polled) }
                            head = polled
                        }
                        directHead = false
                        let final = direct.final(head)
                        connector.sawDirectHead?(final, direct.request)
                        item = .head(final)
                    } else {
                        switch try direct.poll() {
                        case .chunk(let chunk): item = .bytes(chunk)
                        case .end: item = .end
                        case .pending: return .read(direct)
                        }
                    }
                } catch {
                    item = .failed(error)
                }
                try take(item)
            } else {
                return .open
            }
        }
    }

    /// Takes in one item of the running attempt.
    func take(_ item: EventStreamItem) throws {
        switch item {
        case .head(let head):
            try accept(head)
        case .bytes(let chunk):
            do throws(EventStreamError) {
                try parser.parse(chunk, into: &events)
                observeParsed()
            } catch {
                // Events complete before the bad line are still delivered; the error comes after them.
                observeParsed()
                pendingFailure = error
                endAttempt()
                finished = true
            }
        case .end:
            parser.finish()
            endAttempt()
            guard policy.reconnects, connector.mayReconnect else {
                finished = true
                return
            }
            scheduleReconnect(failed: acceptedBefore == nil)
            noteReconnection(.streamEnded)
        case .failed(let error):
            parser.finish()
            endAttempt()
            try reconnect(after: error)
        }
    }

    /// The next event already parsed, if any: what `next()` returns without waiting. The iterators call
    /// this first, so most events cost no async call.
    package func buffered() -> ServerSentEvents.Event? {
        guard delivered < events.count else { return nil }
        let event = events[delivered]
        delivered += 1
        if delivered == events.count {
            events.removeAll(keepingCapacity: true)
            delivered = 0
        }
        return event
    }

    /// Moves what the parser produced into the activities of an observed stream: its events, with the
    /// comments in their places between them.
    func observeParsed() {
        guard activities != nil, let comments = parser.comments else { return }
        parser.comments = []
        activities?.append(events: events[delivered...], comments: comments)
        events.removeAll(keepingCapacity: true)
        delivered = 0
    }

    /// Reports the reconnection just scheduled to an observed stream.
    func noteReconnection(_ cause: EventStreamReconnection.Cause) {
        activities?.append(
            .reconnecting(EventStreamReconnection(cause: cause, delay: wait, attempt: attempts, lastEventID: parser.lastEventID)))
    }

    /// A failure found while events before it were still waiting to be delivered.
    var pendingFailure: EventStreamError?
    /// `acceptedAt` of the attempt that just ended.
    var acceptedBefore: ContinuousClock.Instant?
    /// The graceful shutdown of the session the last attempt ran on: a stream does not reconnect once
    /// it is posted, and its reconnection wait ends when it is.
    var shutdownNotice: ShutdownNotice?
}
