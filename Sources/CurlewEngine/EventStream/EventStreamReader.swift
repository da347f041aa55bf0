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
    private let connector: EventStreamConnector
    private let policy: EventStreamPolicy
    private var parser: EventStreamParser
    private var events: [ServerSentEvent] = []
    private var delivered = 0
    /// The running attempt: its channel and the task that holds its connection.
    private var channel: EventStreamChannel?
    private var producer: Task<Void, Never>?
    /// The running attempt when the reading task reads its transfer directly (no channel, no producer);
    /// `directHead`: its head is still to come.
    private var direct: EventStreamExchange?
    private var directHead = false
    /// A direct attempt that failed before its head.
    private var failedOpen: (any Error)?
    /// The direct attempt's head that is a redirect not followed, to take in as the answer.
    private var unfollowedRedirect: ResponseHead?
    /// The channel's item, received and not yet taken in; or the channel closed because the reading
    /// task was cancelled.
    private var received: EventStreamItem?
    private var receiveCancelled = false
    /// Attempts opened so far, and the id the last one resumed after.
    private var attempts = 0
    private var attemptLastEventID = ""
    /// When the running attempt's head was accepted (nil: not accepted).
    private var acceptedAt: ContinuousClock.Instant?
    /// Failed attempts since the last accepted head.
    private var consecutiveFailures = 0
    private var backoff: BackoffState
    /// The wait before the next attempt.
    private var wait: Duration = .zero
    private var finished = false
    /// Ends the stream from other tasks (``EventStreamCloser``), with this reader's token.
    private let closer: EventStreamCloser
    private let closerToken: Int
    /// What an observed stream reports, in order (nil: not observed; events then wait in `events`).
    private var activities: EventStreamActivityQueue?

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
        channel?.close()
        producer?.cancel()
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
    package nonisolated(nonsending) func next() async throws -> ServerSentEvent? {
        while true {
            switch try step() {
            case .event(let event): return event
            case .activity(let activity): if case .event(let event) = activity { return event }
            case .ended: return nil
            case .open: try await open()
            case .read(let exchange): await exchange.wait()
            case .redirect(let exchange, let head): await follow(head, of: exchange)
            case .receive(let channel): await receive(from: channel)
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
            case .receive(let channel): await receive(from: channel)
            }
        }
    }

    /// What ``next()`` does after a synchronous step.
    private enum Step {
        case event(ServerSentEvent)
        /// An observed stream's next activity.
        case activity(EventStreamActivity)
        case ended
        /// Start the next attempt (after the reconnection wait).
        case open
        /// Wait for the direct attempt's head or bytes.
        case read(EventStreamExchange)
        /// Wait for the channel's next item.
        case receive(EventStreamChannel)
        /// The direct attempt's head is a redirect: follow it (the exchange sends the next hop).
        case redirect(EventStreamExchange, ResponseHead)
    }

    /// Hands out a parsed event, or takes in what the running attempt has (its head, bytes, end or
    /// failure) until there is an event or a wait.
    @inline(never)
    private func step() throws -> Step {
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
            } else if receiveCancelled {
                receiveCancelled = false
                throw fail(EventStreamError.transport(cancellation()))
            } else if let item = received {
                received = nil
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
                        item = .head(direct.final(head))
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
            } else if let channel {
                return .receive(channel)
            } else {
                return .open
            }
        }
    }

    /// Takes in one item of the running attempt.
    private func take(_ item: EventStreamItem) throws {
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
    package func buffered() -> ServerSentEvent? {
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
    private func observeParsed() {
        guard activities != nil, let comments = parser.comments else { return }
        parser.comments = []
        activities?.append(events: events[delivered...], comments: comments)
        events.removeAll(keepingCapacity: true)
        delivered = 0
    }

    /// Reports the reconnection just scheduled to an observed stream.
    private func noteReconnection(_ cause: EventStreamReconnection.Cause) {
        activities?.append(
            .reconnecting(EventStreamReconnection(cause: cause, delay: wait, attempt: attempts, lastEventID: parser.lastEventID)))
    }

    /// A failure found while events before it were still waiting to be delivered.
    private var pendingFailure: EventStreamError?
    /// `acceptedAt` of the attempt that just ended.
    private var acceptedBefore: ContinuousClock.Instant?

    // MARK: Attempts

    /// Waits for the channel's next item and keeps it for ``step()``; cancelling the reading task
    /// closes the channel.
    @inline(never)
    private nonisolated(nonsending) func receive(from channel: EventStreamChannel) async {
        let item = await withTaskCancellationHandler {
            await channel.receive()
        } onCancel: {
            channel.close()
        }
        if let item { received = item } else { receiveCancelled = true }
    }

    /// Follows the direct attempt's redirect (the exchange skips its body and sends the next hop), or
    /// keeps its head as the answer when the rules or the policy do not follow it; a refusal fails the
    /// attempt.
    @inline(never)
    private nonisolated(nonsending) func follow(_ head: ResponseHead, of exchange: EventStreamExchange) async {
        do {
            if try await exchange.follow(head) {
                closer.setWake(closerToken, exchange.abort)
                return
            }
            unfollowedRedirect = head
        } catch {
            endAttempt()
            failedOpen = error
        }
    }

    /// Waits the reconnection time (not before the first attempt), then starts the next attempt.
    @inline(never)
    private nonisolated(nonsending) func open() async throws {
        if attempts > 0, wait > .zero {
            await closer.sleep(closerToken, for: wait)
            if Task.isCancelled { throw fail(EventStreamError.transport(cancellation())) }
            if closer.isClosed { return }
        }
        try startAttempt()
    }

    /// Starts the next attempt: read directly when the connector can, else through a channel.
    @inline(never)
    private func startAttempt() throws {
        if Task.isCancelled { throw fail(EventStreamError.transport(cancellation())) }
        let attempt = attempts
        let lastEventID = parser.lastEventID
        let connector = connector
        attempts += 1
        acceptedAt = nil
        attemptLastEventID = lastEventID
        if let startDirect = connector.direct {
            do {
                if let exchange = try startDirect(attempt, lastEventID) {
                    direct = exchange
                    directHead = true
                    closer.setWake(closerToken, exchange.abort)
                    return
                }
            } catch {
                // The attempt failed before its head: what a failed channel item would have said.
                direct = nil
                failedOpen = error
                return
            }
        }
        startProducer(attempt: attempt, lastEventID: lastEventID)
    }

    /// Starts an attempt read through a channel: a task of its own holds the scoped exchange and hands
    /// its head, chunks and end over.
    @inline(never)
    private func startProducer(attempt: Int, lastEventID: String) {
        let channel = EventStreamChannel()
        let connector = connector
        self.channel = channel
        let producer = Task {
            do {
                try await connector.connect(attempt, lastEventID) { head, body in
                    guard await channel.send(.head(head)) else { return }
                    try await channel.forward(body)
                }
            } catch {
                _ = await channel.send(.failed(error))
            }
        }
        self.producer = producer
        closer.setWake(closerToken) {
            channel.close()
            producer.cancel()
        }
    }

    /// Decides on an attempt's head: read it, reconnect after it, or fail.
    private func accept(_ head: ResponseHead) throws {
        if EventStreamRequest.isEventStream(head) {
            acceptedAt = .now
            consecutiveFailures = 0
            backoff.succeeded(at: .now)
            return
        }
        endAttempt()
        let status = head.status.code
        if status == 204 { throw fail(EventStreamError.noContent) }
        if status == 200 { throw fail(EventStreamError.unexpectedContentType(head.headerFields[.contentType])) }
        guard policy.retryableStatuses.contains(status), policy.reconnects, connector.mayReconnect else {
            throw fail(EventStreamError.unexpectedStatus(status))
        }
        try countFailure(EventStreamError.unexpectedStatus(status))
        scheduleReconnect(failed: true)
        if let value = head.headerFields[.retryAfter], let asked = RetryAfter.delay(value, now: Date()) {
            wait = max(wait, min(asked, EventStreamParser.maximumReconnectionTime))
        }
        noteReconnection(.status(status))
    }

    /// After a failed attempt: reconnects when the failure is a transport one worth another attempt.
    private func reconnect(after error: any Error) throws {
        guard policy.reconnects, connector.mayReconnect, let transport = connector.transportError(error),
            Self.mayReconnect(after: transport.code)
        else {
            if let error = error as? EventStreamError { throw fail(error) }
            if let transport = error as? TransportError { throw fail(EventStreamError.transport(transport)) }
            finished = true
            throw error
        }
        // A connection lost after a working stream is the stream's end, not a failed attempt.
        if acceptedBefore == nil { try countFailure(error) }
        scheduleReconnect(failed: acceptedBefore == nil)
        noteReconnection(.transportFailure(transport))
    }

    /// Counts a failed attempt; throws `error` when the policy allows no more.
    private func countFailure(_ error: any Error) throws {
        consecutiveFailures += 1
        if let limit = policy.maxConsecutiveFailures, consecutiveFailures >= limit {
            if let error = error as? EventStreamError { throw fail(error) }
            if let transport = error as? TransportError { throw fail(EventStreamError.transport(transport)) }
            finished = true
            throw error
        }
    }

    /// Sets the wait before the next attempt: the server's `retry` (else the policy's time), plus the
    /// backoff after a failed attempt (one whose head was not accepted). The backoff's count of failures
    /// is forgotten once a stream has worked for its healthy period.
    private func scheduleReconnect(failed: Bool) {
        let base = parser.reconnectionTime ?? policy.reconnectionTime
        wait = failed ? base + backoff.failed(at: .now, random: Double.random(in: 0..<1)) : base
    }

    /// Ends the stream: its connection is closed, and `next()` returns nil from now on.
    package func close() {
        endAttempt()
        finished = true
        events.removeAll()
        delivered = 0
        activities?.removeAll()
        pendingFailure = nil
    }

    /// Ends the running attempt: its connection is closed unless it already ended.
    private func endAttempt() {
        acceptedBefore = acceptedAt
        acceptedAt = nil
        direct?.close()
        direct = nil
        directHead = false
        unfollowedRedirect = nil
        channel?.close()
        channel = nil
        producer?.cancel()
        producer = nil
        closer.setWake(closerToken, nil)
    }

    /// Ends the stream for good with `error`.
    private func fail(_ error: EventStreamError) -> EventStreamError {
        endAttempt()
        finished = true
        events.removeAll()
        delivered = 0
        activities?.removeAll()
        return error
    }

    private func cancellation() -> TransportError {
        TransportError(.cancelled, message: "the task reading the event stream was cancelled")
    }

    /// Transport failures after which a new connection may work: the connection, not the request,
    /// failed.
    static func mayReconnect(after code: TransportError.Code) -> Bool {
        switch code {
        case .connectionClosed, .connectionReset, .timedOut, .cannotConnect, .dnsFailure, .streamReset,
            .http2ConnectionFailed, .invalidResponse:
            true
        default:
            false
        }
    }
}
