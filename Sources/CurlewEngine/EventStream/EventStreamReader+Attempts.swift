// Curlew — an event stream's connection attempts: opening one (directly or through the connector),
// taking in its head, following its redirect, and the reconnection after it ends or fails.

import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension EventStreamReader {

    /// Follows the direct attempt's redirect (the exchange skips its body and sends the next hop), or
    /// keeps its head as the answer when the rules or the policy do not follow it; a refusal fails the
    /// attempt.
    @inline(never)
    nonisolated(nonsending) func follow(_ head: ResponseHead, of exchange: EventStreamExchange) async {
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

    /// Waits the reconnection time (not before the first attempt), then starts the next attempt, unless
    /// the session began a graceful shutdown meanwhile.
    @inline(never)
    nonisolated(nonsending) func open() async throws {
        if attempts > 0, wait > .zero {
            await closer.sleep(closerToken, for: wait, orUntil: shutdownNotice)
            if Task.isCancelled { throw fail(EventStreamError.transport(cancellation())) }
            if closer.isClosed { return }
        }
        if shutdownNotice?.isPosted == true {
            throw fail(
                EventStreamError.transport(
                    TransportError(
                        .sessionShutDown,
                        message: "the session is shutting down gracefully: the event stream does not reconnect")))
        }
        if let (attempt, lastEventID) = try startAttempt() { await connect(attempt: attempt, lastEventID: lastEventID) }
    }

    /// Starts the next attempt directly when the connector can; otherwise returns the attempt and the id
    /// it resumes after, for ``connect(attempt:lastEventID:)``.
    @inline(never)
    func startAttempt() throws -> (Int, String)? {
        if Task.isCancelled { throw fail(EventStreamError.transport(cancellation())) }
        let attempt = attempts
        let lastEventID = parser.lastEventID
        attempts += 1
        acceptedAt = nil
        attemptLastEventID = lastEventID
        guard let startDirect = connector.direct else { return (attempt, lastEventID) }
        do {
            guard let exchange = try startDirect(attempt, lastEventID) else { return (attempt, lastEventID) }
            direct = exchange
            directHead = true
            shutdownNotice = exchange.shutdownNotice
            closer.setWake(closerToken, exchange.abort)
        } catch {
            // The attempt failed before its head: taken in as any failed attempt is.
            direct = nil
            failedOpen = error
        }
        return nil
    }

    /// Opens an attempt through the connector and keeps its head and detached body, or its failure.
    ///
    /// The connector's stages run in a task that ends with the head: a task's allocator keeps the
    /// deepest stack the task ever had until it ends, and the reading task spends the stream's life
    /// here, so their frames must not be its. No task lives beside the stream, and nothing is handed over
    /// per chunk: the reading task reads the body itself.
    @inline(never)
    nonisolated(nonsending) func connect(attempt: Int, lastEventID: String) async {
        let connector = connector
        let opening = Task { try await connector.connect(attempt, lastEventID) }
        closer.setWake(closerToken) { opening.cancel() }
        let result = await withTaskCancellationHandler {
            await opening.result
        } onCancel: {
            opening.cancel()
        }
        switch result {
        case .success(let attempt):
            let body = attempt.body
            opened = body.makeAsyncIterator()
            openedHead = attempt.head
            shutdownNotice = body.shutdownNotice ?? shutdownNotice
            closer.setWake(closerToken) { body.abortTransfer() }
        case .failure(let error):
            failedOpen = error
        }
    }

    /// Decides on an attempt's head: read it, reconnect after it, or fail.
    func accept(_ head: ResponseHead) throws {
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
    func reconnect(after error: any Error) throws {
        guard policy.reconnects, connector.mayReconnect, let transport = connector.transportError(error),
            Self.mayReconnect(after: transport.code)
        else {
            throw ending(error)
        }
        // A connection lost after a working stream is the stream's end, not a failed attempt.
        if acceptedBefore == nil { try countFailure(error) }
        scheduleReconnect(failed: acceptedBefore == nil)
        noteReconnection(.transportFailure(transport))
    }

    /// Counts a failed attempt; throws `error` when the policy allows no more.
    func countFailure(_ error: any Error) throws {
        consecutiveFailures += 1
        if let limit = policy.maxConsecutiveFailures, consecutiveFailures >= limit { throw ending(error) }
    }

    /// Sets the wait before the next attempt: the server's `retry` (else the policy's time), plus the
    /// backoff after a failed attempt (one whose head was not accepted). The backoff's count of failures
    /// is forgotten once a stream has worked for its healthy period.
    func scheduleReconnect(failed: Bool) {
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
    func endAttempt() {
        acceptedBefore = acceptedAt
        acceptedAt = nil
        direct?.close()
        direct = nil
        directHead = false
        unfollowedRedirect = nil
        // Dropping the detached body aborts a transfer still running.
        opened = nil
        openedHead = nil
        closer.setWake(closerToken, nil)
    }

    /// Ends the stream for good with `error`, which the stream throws: a transport failure (as the
    /// connector finds one) as ``EventStreamError/transport(_:)``, anything else the connector threw as
    /// it is.
    func ending(_ error: any Error) -> any Error {
        if let error = error as? EventStreamError { return fail(error) }
        if let transport = connector.transportError(error) { return fail(EventStreamError.transport(transport)) }
        finished = true
        return error
    }

    /// Ends the stream for good with `error`.
    func fail(_ error: EventStreamError) -> EventStreamError {
        endAttempt()
        finished = true
        events.removeAll()
        delivered = 0
        activities?.removeAll()
        return error
    }

    func cancellation() -> TransportError {
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
