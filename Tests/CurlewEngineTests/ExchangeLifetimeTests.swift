// Curlew — how long a streamed exchange lives, over HTTP/1.1 and HTTP/2 against stream_server.py: `perform`
// returns once its handler has returned and its request body has ended, so a body that ends after the
// handler reaches the server whole and its connection is kept; a throwing handler or a cancelled caller ends
// both at once, and the total timeout ends a body that never does.

@testable import CurlewEngine
import CurlewTestSupport
import Foundation
import HTTPTypes
import Testing

/// How a stream body's producer ended.
private enum ProducerEnd: Equatable, Sendable {
    /// It returned: the body was complete.
    case returned
    /// It threw a TransportError of this code (a write refused).
    case transportError(TransportError.Code)
    /// It threw CancellationError (a wait of its own, cancelled).
    case cancellationError
    /// It threw something else.
    case other(String)

    init(_ error: any Error) {
        switch error {
        case let error as TransportError: self = .transportError(error.code)
        case is CancellationError: self = .cancellationError
        default: self = .other(String(describing: error))
        }
    }
}

/// What the handler of ``ExchangeLifetimeTests/aThrowingHandlerAbortsTheRequestBody(wire:)`` throws.
private struct HandlerStopped: Error, Equatable {
    let tag: String
}

/// The path of a `/speak` of `rounds` rounds tagged `tag`, whose response's end the handler sees as soon
/// as it arrives. Over HTTP/1.1 the engine reads the chunked framing itself; over HTTP/2 the response
/// carries its length, since libcurl 7.88 reports the end of a response that has neither a length nor
/// trailers only when the whole exchange ends, after the request body's (see `speakInterleaved` in
/// StreamingConformanceTests).
private func speakPath(rounds: Int, tag: String, over wire: Wire) -> String {
    "/speak?rounds=\(rounds)&tag=\(tag)" + (wire == .http2 ? "&length=1" : "")
}

/// The time limit turns an exchange that never ends (a producer nobody stops) into a failure, not a hang.
@Suite(.timeLimit(.minutes(2))) struct ExchangeLifetimeTests {
    /// A 20-round speak whose request body ends only after the handler has returned: the handler reads the
    /// response to its end; the producer answers each `A`, then waits for the handler's last step, gives it
    /// 50 ms to return, writes one byte more and returns. `perform` returns the rounds once the producer
    /// has returned; the server read the whole body, its 21 bytes and its end; and the next request goes
    /// over the same connection.
    ///
    /// Ten exchanges, each of which must hold: aborting the transfer when the handler returned lost the
    /// body's end (and the connection) in nine runs of ten.
    @Test(arguments: Wire.allCases)
    func theHandlerReturnsDuringSpeakInterleave(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            for run in 1...10 {
                try await speakPastTheHandler(run: run, wire: wire, server: server, session: session)
            }
        }
    }

    private func speakPastTheHandler(run: Int, wire: Wire, server: StreamTestServer, session: CurlSession) async throws {
        let rounds = 20
        let tag = UUID().uuidString
        let (heard, hear) = AsyncStream<Void>.makeStream()
        let handlerReturns = Gate()
        let end = Locked<ProducerEnd?>(nil)
        let body = TransportRequest.Body.stream { writer in
            do {
                var answered = 0
                for await _ in heard {
                    try await writer.write("B")
                    answered += 1
                    if answered == rounds { break }
                }
                // A transfer that failed before the handler ran cancels this task: no signal will come.
                try Task.checkCancellation()
                await handlerReturns.wait()
                try await Task.sleep(for: .milliseconds(50))
                try await writer.write("C")
                end.withLock { $0 = .returned }
            } catch {
                end.withLock { $0 = ProducerEnd(error) }
                throw error
            }
        }
        let url = server.url(speakPath(rounds: rounds, tag: tag, over: wire))
        let request = TransportRequest(url: url, method: .post, body: body)
        let heardRounds = try await session.perform(request) { head, body in
            // Also when the handler throws: the producer must not wait for a signal that never comes.
            defer {
                hear.finish()
                handlerReturns.open()
            }
            #expect(head.status == .ok)
            return try await hearRounds(of: body, answering: hear)
        }
        #expect(heardRounds == rounds, "run \(run)")
        // `perform` waited for the producer, which was not cancelled.
        #expect(end.withLock { $0 } == .returned, "run \(run)")

        let received = try await nextRequest(sentLikeTheSpeak: wire, server: server, session: session, run: run)

        let found = try await server.speakReport(tag: tag, over: session)
        let report = try #require(found, "run \(run)")
        #expect(report.ended, "run \(run)")
        #expect(report.complete, "run \(run): the server did not get the body's end")
        #expect(report.bodyBytes == rounds + 1, "run \(run)")
        #expect(report.spoken == rounds, "run \(run)")
        // The speak's connection was kept, and carried the next request.
        #expect(received.connection == report.connection, "run \(run)")
        #expect(received.request == report.request + 1, "run \(run)")
    }

    /// What `/request` reports of a request sent as the speak was carried. Where this libcurl's fallbacks
    /// carry a streamed response or a streamed upload to an https host over HTTP/1.1
    /// (``CurlQuirks/streamedResponsesAvoidHTTP2``, ``CurlQuirks/callbackUploadsAvoidHTTP2``), the speak's
    /// connection is one of those: the next request is a streamed upload read through `perform`, which
    /// takes the same way. Elsewhere it is a plain GET.
    private func nextRequest(
        sentLikeTheSpeak wire: Wire, server: StreamTestServer, session: CurlSession, run: Int
    ) async throws -> ReceivedRequest {
        let quirks = CurlQuirks.current
        guard wire == .http2, quirks.streamedResponsesAvoidHTTP2 || quirks.callbackUploadsAvoidHTTP2 else {
            let next = try await session.execute(TransportRequest(url: server.url("/request")))
            #expect(next.status == .ok, "run \(run)")
            let received = try ReceivedRequest(next.body)
            #expect(received.protocol == (wire == .http2 ? "h2" : "http/1.1"), "run \(run)")
            return received
        }
        let body = TransportRequest.Body.stream { writer in try await writer.write("next") }
        let request = TransportRequest(url: server.url("/request"), method: .post, body: body)
        let received = try await session.perform(request) { head, body in
            #expect(head.status == .ok, "run \(run)")
            #expect(head.httpVersion == .http1_1, "run \(run)")
            return try ReceivedRequest(try await body.collect(upTo: 1 << 20))
        }
        #expect(received.protocol == "http/1.1", "run \(run)")
        return received
    }

    /// A detached body's request body goes on after `perform` returned: a producer fed only once the
    /// caller holds the response (as a generated OpenAPI client's caller does) has each piece echoed before
    /// the next, and the exchange ends with both bodies.
    @Test(arguments: Wire.allCases)
    func aDetachedBodysProducerRunsOnAfterPerformReturned(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let (pieces, feed) = AsyncStream<[UInt8]>.makeStream()
            let request = TransportRequest(url: server.url("/echo"), method: .post, body: .sequence(pieces))
            let (head, body) = try await session.perform(request) { head, body in (head, try body.detach()) }
            #expect(head.status == .ok)
            var chunks = body.makeAsyncIterator()
            for round in 0..<3 {
                let piece = Array("piece \(round)".utf8)
                feed.yield(piece)
                var received: [UInt8] = []
                while received.count < piece.count, let chunk = try await chunks.next() { received += chunk }
                #expect(received == piece)
            }
            feed.finish()
            #expect(try await chunks.next() == nil)
            #expect(await eventually { session.statistics.activeTransfers == 0 })
            #expect(session.statistics.completedTransfers >= 1)
        }
    }

    /// The handler reads the whole response and returns; the producer then waits and never ends. The
    /// request's total timeout (5 s: long enough for the rounds on a loaded machine) ends the exchange: `perform` throws `timedOut` (total), the
    /// producer's wait is cancelled, and the server read the three answers but never the body's end.
    @Test(arguments: Wire.allCases)
    func aProducerThatNeverEndsFailsAtTheTotalTimeout(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            // A connection ready before the clock starts: the timeout must find the handler returned.
            let warmUp = try await session.execute(TransportRequest(url: server.url("/request")))
            #expect(warmUp.status == .ok)

            let rounds = 3
            let tag = UUID().uuidString
            let (heard, hear) = AsyncStream<Void>.makeStream()
            let end = Locked<ProducerEnd?>(nil)
            let body = TransportRequest.Body.stream { writer in
                do {
                    for await _ in heard { try await writer.write("B") }
                    try await Task.sleep(for: .seconds(3600))
                    end.withLock { $0 = .returned }
                } catch {
                    end.withLock { $0 = ProducerEnd(error) }
                    throw error
                }
            }
            let request = TransportRequest(
                url: server.url(speakPath(rounds: rounds, tag: tag, over: wire)), method: .post, body: body,
                timeout: .seconds(5))
            let handlerReturned = Locked(false)
            let error = await transportError {
                try await session.perform(request) { head, body in
                    defer { hear.finish() }
                    #expect(head.status == .ok)
                    let heardRounds = try await hearRounds(of: body, answering: hear)
                    #expect(heardRounds == rounds)
                    handlerReturned.withLock { $0 = true }
                    return heardRounds
                }
            }
            #expect(handlerReturned.withLock { $0 })
            #expect(error?.code == .timedOut, "\(String(describing: error))")
            #expect(error?.timeout == .total, "\(String(describing: error))")
            // Ended with the exchange: cancelled and awaited before `perform` threw.
            #expect(end.withLock { $0 } == .cancellationError)

            let found = try await server.speakReport(tag: tag, over: session)
            let report = try #require(found)
            #expect(report.ended)
            #expect(!report.complete)
            #expect(report.bodyBytes == rounds)
            #expect(report.spoken == rounds)
        }
    }

    /// The handler throws as soon as the head has arrived and the producer has written, while the producer
    /// writes as fast as it may: `perform` rethrows the handler's own error, the producer's writes end (one
    /// throws `cancelled` before `perform` returns), and the server never got the body's end.
    @Test(arguments: Wire.allCases)
    func aThrowingHandlerAbortsTheRequestBody(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let tag = UUID().uuidString
            let writing = Gate()
            let end = Locked<ProducerEnd?>(nil)
            let body = TransportRequest.Body.stream { writer in
                let chunk = [UInt8](repeating: UInt8(ascii: "B"), count: 1024)
                do {
                    while true {
                        try await writer.write(chunk)
                        writing.open()
                    }
                } catch {
                    end.withLock { $0 = ProducerEnd(error) }
                    writing.open()
                    throw error
                }
            }
            // Rounds enough to go on for as long as the body comes.
            let request = TransportRequest(url: server.url("/speak?rounds=100000000&tag=\(tag)"), method: .post, body: body)
            await #expect(throws: HandlerStopped(tag: tag)) {
                try await session.perform(request) { head, _ in
                    #expect(head.status == .ok)
                    // The producer is under way (its first write, into an empty buffer, does not wait).
                    await writing.wait()
                    throw HandlerStopped(tag: tag)
                }
            }
            #expect(end.withLock { $0 } == .transportError(.cancelled))

            let found = try await server.speakReport(tag: tag, over: session)
            let report = try #require(found)
            #expect(report.ended)
            #expect(!report.complete)
        }
    }

    /// The calling task is cancelled while the producer answers and the handler reads, ten rounds into an
    /// endless speak: `perform` throws `cancelled`, the producer has ended by then (a write refused, or its
    /// wait for the next `A` cancelled), and the server never got the body's end.
    @Test(arguments: Wire.allCases)
    func cancellingAbortsBoth(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let tag = UUID().uuidString
            let (heard, hear) = AsyncStream<Void>.makeStream()
            let (started, start) = AsyncStream<Void>.makeStream()
            let end = Locked<ProducerEnd?>(nil)
            let body = TransportRequest.Body.stream { writer in
                do {
                    for await _ in heard { try await writer.write("B") }
                    // The answers stop only when the task is cancelled: the body must not end whole then.
                    try Task.checkCancellation()
                    end.withLock { $0 = .returned }
                } catch {
                    end.withLock { $0 = ProducerEnd(error) }
                    throw error
                }
            }
            let request = TransportRequest(url: server.url("/speak?rounds=100000000&tag=\(tag)"), method: .post, body: body)
            let outcome = await errorAfterCancelling(once: started) {
                // Whatever happens, the wait for the start ends.
                defer { start.finish() }
                _ = try await session.perform(request) { head, body in
                    #expect(head.status == .ok)
                    var rounds = 0
                    for try await chunk in body where !chunk.isEmpty {
                        #expect(Array(chunk) == [UInt8(ascii: "A")])
                        rounds += 1
                        hear.yield()
                        if rounds == 10 { start.yield() }
                    }
                    return rounds
                }
            }
            hear.finish()
            let error = try #require(outcome as? TransportError, "\(String(describing: outcome))")
            #expect(error.code == .cancelled)
            let ended = end.withLock { $0 }
            #expect(ended == .transportError(.cancelled) || ended == .cancellationError, "\(String(describing: ended))")
            #expect(await eventually { session.statistics.activeTransfers == 0 })

            let found = try await server.speakReport(tag: tag, over: session)
            let report = try #require(found)
            #expect(report.ended)
            #expect(!report.complete)
        }
    }
}
