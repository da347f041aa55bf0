// Curlew — a session stopped gracefully, by its own call or as a service of a real ServiceGroup, against
// loopback servers: which requests finished, were refused, failed queued or were cancelled at the
// deadline; event streams ended; the session's own descriptors closed and its loop thread gone.

import CurlewEngine
import CurlewServiceLifecycle
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

@Suite struct GracefulShutdownTests {
    @Test func aServiceGroupsGracefulShutdownLetsRequestsFinishRefusesNewOnesAndCancelsTheRestAtItsDeadline() async throws {
        let release = Gate()
        let server = try await LocalHTTPServer.start { request in
            guard request.path == "/finish" else { return .hang }
            await release.wait()
            return .text(finishedBody(request.query["n"]))
        }
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 6
        configuration.maxConnectionsTotal = 6
        // What the service's graceful shutdown gives requests in flight: the hanging ones reach it; long
        // enough for the finishing ones on a loaded machine (3 s was not, with the whole suite running).
        configuration.gracefulShutdownTimeout = .seconds(8)
        let (session, watch) = try watchedSession(configuration)
        let group = ServiceGroup(services: [session], logger: quietLogger)
        let running = Task { try await group.run() }

        let finishing = (0..<3).map { n in Task { await outcome(of: session, server.url("/finish?n=\(n)")) } }
        let hanging = (0..<3).map { n in Task { await outcome(of: session, server.url("/hang?n=\(n)")) } }
        #expect(await eventually { server.statistics.requestsReceived == 6 })
        let queued = (0..<4).map { n in Task { await outcome(of: session, server.url("/queued?n=\(n)")) } }
        #expect(await eventually { session.statistics.queuedTransfers == 4 })
        let thread = session.loopThreadKernelID
        #expect(threadIsAlive(thread))
        // The epoll fd, the eventfd and one socket per connection, all open.
        #expect(watch.all.count == 2 + 6)
        #expect(watch.stillOpen() == watch.all.sorted())

        await group.triggerGracefulShutdown()
        for task in queued { #expect(await task.value == .failed(.sessionShutDown, queuedMessage)) }
        // The queued ones failed: the shutdown has begun, and refuses what comes now.
        #expect(await outcome(of: session, server.url("/refused")) == .failed(.sessionShutDown, refusedMessage))
        release.open()
        for (n, task) in finishing.enumerated() { #expect(await task.value == .finished(200, finishedBody("\(n)"))) }
        for task in hanging {
            #expect(
                await task.value
                    == .failed(.sessionShutDown, "the session's graceful shutdown deadline (8.0 seconds) passed before the transfer finished"))
        }
        try await running.value

        #expect(watch.stillOpen() == [])
        #expect(await eventually { !threadIsAlive(thread) })
        #expect(server.statistics.requestsReceived == 6)
        #expect(server.statistics.connectionsAccepted == 6)
        #expect(session.statistics.completedTransfers == 3)
        #expect(session.statistics.cancelledTransfers == 3)
        #expect(await outcome(of: session, server.url("/after")) == .failed(.sessionShutDown, "the session was shut down"))
        try await server.shutdown()
    }

    @Test func theTestKitsGracefulShutdownStopsASessionServiceOnceItsStreamedAndBufferedResponsesFinished() async throws {
        let release = Gate()
        let server = try await LocalHTTPServer.start { request in
            switch request.path {
            case "/finish":
                await release.wait()
                return .text(finishedBody("buffered"))
            case "/stream":
                await release.wait()
                return .chunked(status: 200, chunks: (0..<50).map { Array("chunk \($0);".utf8) })
            default:
                return .hang
            }
        }
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 2
        configuration.maxConnectionsTotal = 2
        let (session, watch) = try watchedSession(configuration)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await session.run() }
                let buffered = Task { await outcome(of: session, server.url("/finish")) }
                let streamed = Task { () -> Outcome in
                    do {
                        return try await session.perform(TransportRequest(url: server.url("/stream"))) { head, body in
                            var bytes: [UInt8] = []
                            for try await chunk in body { bytes += chunk }
                            return .finished(head.status.code, String(decoding: bytes, as: UTF8.self))
                        }
                    } catch let error as TransportError {
                        return .failed(error.code, error.message)
                    } catch {
                        return .failed(.curl, "not a transport error: \(error)")
                    }
                }
                #expect(await eventually { server.statistics.requestsReceived == 2 })
                let queued = Task { await outcome(of: session, server.url("/queued")) }
                #expect(await eventually { session.statistics.queuedTransfers == 1 })
                let thread = session.loopThreadKernelID

                trigger.triggerGracefulShutdown()
                #expect(await queued.value == .failed(.sessionShutDown, queuedMessage))
                #expect(await outcome(of: session, server.url("/refused")) == .failed(.sessionShutDown, refusedMessage))
                release.open()
                #expect(await buffered.value == .finished(200, finishedBody("buffered")))
                #expect(await streamed.value == .finished(200, (0..<50).map { "chunk \($0);" }.joined()))
                try await group.waitForAll()
                #expect(watch.stillOpen() == [])
                #expect(await eventually { !threadIsAlive(thread) })
            }
        }
        #expect(watch.all.count == 2 + 2)
        #expect(server.statistics.requestsReceived == 2)
        try await server.shutdown()
    }

    @Test func cancellingTheServiceBeforeItsGroupShutsDownStopsTheSessionAtOnce() async throws {
        let server = try await LocalHTTPServer.start { _ in .hang }
        let (session, watch) = try watchedSession(SessionConfiguration())
        let group = ServiceGroup(services: [session], logger: quietLogger)
        let running = Task { try await group.run() }
        let hanging = Task { await outcome(of: session, server.url("/hang")) }
        #expect(await eventually { server.statistics.requestsReceived == 1 })
        let thread = session.loopThreadKernelID

        running.cancel()
        #expect(await hanging.value == .failed(.sessionShutDown, "the session was shut down"))
        try? await running.value
        #expect(watch.stillOpen() == [])
        #expect(await eventually { !threadIsAlive(thread) })
        #expect(watch.all.count == 2 + 1)
        try await server.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellingTheServiceDuringItsGracefulShutdownCancelsWhatIsLeftAtOnce() async throws {
        let server = try await LocalHTTPServer.start { _ in .hang }
        var configuration = SessionConfiguration()
        configuration.maxConnectionsPerHost = 1
        // Far beyond the test's time limit: only the cancellation can end the hanging request in time.
        configuration.gracefulShutdownTimeout = .seconds(600)
        let (session, watch) = try watchedSession(configuration)
        let group = ServiceGroup(services: [session], logger: quietLogger)
        let running = Task { try await group.run() }
        let hanging = Task { await outcome(of: session, server.url("/hang")) }
        #expect(await eventually { server.statistics.requestsReceived == 1 })
        let queued = Task { await outcome(of: session, server.url("/queued")) }
        #expect(await eventually { session.statistics.queuedTransfers == 1 })
        let thread = session.loopThreadKernelID

        await group.triggerGracefulShutdown()
        #expect(await queued.value == .failed(.sessionShutDown, queuedMessage))
        running.cancel()
        #expect(await hanging.value == .failed(.sessionShutDown, "the session was shut down"))
        try? await running.value
        #expect(watch.stillOpen() == [])
        #expect(await eventually { !threadIsAlive(thread) })
        try await server.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func shuttingDownGracefullyTwiceAtOnceOrAfterShutdownIsSafe() async throws {
        let release = Gate()
        let server = try await LocalHTTPServer.start { request in
            if request.path == "/probe" { return .text("probe") }
            await release.wait()
            return .text(finishedBody("one"))
        }
        let (session, watch) = try watchedSession(SessionConfiguration())
        let inFlight = Task { await outcome(of: session, server.url("/finish")) }
        #expect(await eventually { server.statistics.requestsReceived == 1 })
        let thread = session.loopThreadKernelID
        let first = Task { await session.shutdownGracefully(within: .seconds(600)) }
        let second = Task { await session.shutdownGracefully(within: .seconds(600)) }
        // Probes are answered until the shutdown has begun, then refused.
        #expect(
            await eventuallyAsync {
                await outcome(of: session, server.url("/probe")) == .failed(.sessionShutDown, refusedMessage)
            })
        release.open()
        await first.value
        await second.value
        #expect(await inFlight.value == .finished(200, finishedBody("one")))
        #expect(watch.stillOpen() == [])
        #expect(await eventually { !threadIsAlive(thread) })
        await session.shutdownGracefully()
        await session.shutdown()

        let (other, otherWatch) = try watchedSession(SessionConfiguration())
        #expect(await outcome(of: other, server.url("/probe")) == .finished(200, "probe"))
        let otherThread = other.loopThreadKernelID
        await other.shutdown()
        await other.shutdownGracefully(within: .seconds(600))
        #expect(otherWatch.all.count == 2 + 1)
        #expect(otherWatch.stillOpen() == [])
        #expect(await eventually { !threadIsAlive(otherThread) })
        try await server.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func anEventStreamEndsAtOnceWithTheTypedErrorAndDoesNotReconnect() async throws {
        let server = try await LocalHTTPServer.start { _ in
            .drip(head: eventStreamHead, chunk: Array("data: tick\n\n".utf8), interval: .milliseconds(20), count: 1_000_000, after: .keepOpen)
        }
        let (session, watch) = try watchedSession(SessionConfiguration())
        let stream = session.events(for: TransportRequest(url: server.url("/ticks")))
        let first = Gate()
        let reading = Task { () -> (events: Int, end: String) in
            var events = 0
            do {
                for try await event in stream where event.data == "tick" {
                    events += 1
                    if events == 1 { first.open() }
                }
                return (events, "ended")
            } catch {
                return (events, describe(error))
            }
        }
        await first.wait()
        // Far beyond the test's time limit: an event stream left running would keep the shutdown waiting.
        await session.shutdownGracefully(within: .seconds(600))
        let (events, end) = await reading.value
        #expect(events >= 1)
        #expect(end == "transport sessionShutDown: the session is shutting down gracefully: event streams end at once")
        #expect(server.statistics.requestsReceived == 1)
        #expect(watch.stillOpen() == [])
        #expect(watch.all.count == 2 + 1)
        try await server.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func anEventStreamWaitingToReconnectEndsAtOnceWithoutReconnecting() async throws {
        // One event, then the response ends: the reader waits an hour (the server's `retry`) to reconnect.
        let server = try await LocalHTTPServer.start { _ in
            .respond(status: 200, headers: [("Content-Type", "text/event-stream")], body: Array("retry: 3600000\ndata: one\n\n".utf8))
        }
        let session = try CurlSession()
        let stream = session.events(for: TransportRequest(url: server.url("/once")))
        let waiting = Gate()
        let reading = Task { () -> [String] in
            var seen: [String] = []
            do {
                for try await activity in stream.activity {
                    switch activity {
                    case .event(let event): seen.append("event \(event.data)")
                    case .reconnecting(let reconnection):
                        seen.append("reconnecting after \(reconnection.delay)")
                        waiting.open()
                    case .comment: continue
                    }
                }
                seen.append("ended")
            } catch {
                seen.append(describe(error))
            }
            return seen
        }
        await waiting.wait()
        // Most likely asleep in its wait by now; posted before it slept, it ends the same way.
        try await Task.sleep(for: .milliseconds(100))
        await session.shutdownGracefully(within: .seconds(600))
        #expect(
            await reading.value == [
                "event one", "reconnecting after 3600.0 seconds",
                "transport sessionShutDown: the session is shutting down gracefully: the event stream does not reconnect",
            ])
        #expect(server.statistics.requestsReceived == 1)
        try await server.shutdown()
    }

    @Test func theDescriptorWatchTellsAClosedFileFromALaterOneGivenItsNumber() throws {
        let watch = DescriptorWatch()
        let first = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #expect(watch.watch(first))
        #expect(watch.stillOpen() == [first])
        close(first)
        #expect(watch.stillOpen() == [])
        // The lowest free number: most likely `first`'s again, which must not count as still open.
        let second = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(second) }
        #expect(watch.stillOpen() == [])
    }

    @Test func theProcessWideDefaultSessionIsNeverStoppedByAServiceGroup() async throws {
        let server = try await LocalHTTPServer.start { _ in .text("still serving") }
        let shared = try #require(CurlSession.shared as? CurlSession)
        #expect(await outcome(of: shared, server.url("/")) == .finished(200, "still serving"))
        let thread = shared.loopThreadKernelID
        let group = ServiceGroup(services: [shared], logger: quietLogger)
        let running = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(await outcome(of: shared, server.url("/")) == .finished(200, "still serving"))
        #expect(threadIsAlive(thread))
        try await server.shutdown()
    }
}

// MARK: Helpers

/// How one request ended: its status and body, or its error's code and message.
enum Outcome: Equatable, Sendable {
    case finished(Int, String)
    case failed(TransportError.Code, String)
}

func outcome(of session: CurlSession, _ url: String) async -> Outcome {
    do {
        let response = try await session.execute(TransportRequest(url: url))
        return .finished(response.status.code, String(decoding: response.body, as: UTF8.self))
    } catch {
        return .failed(error.code, error.message)
    }
}

/// Polls an async `condition` every 10 ms for up to 20 seconds; returns whether it became true.
func eventuallyAsync(_ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(20)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}

/// A session whose own descriptors are watched: its epoll fd, its eventfd, and every socket it opens.
func watchedSession(_ configuration: SessionConfiguration) throws -> (CurlSession, DescriptorWatch) {
    let session = try CurlSession(configuration: configuration)
    let watch = DescriptorWatch()
    let (epoll, wake) = session.loopDescriptors
    watch.watch(epoll)
    watch.watch(wake)
    session.observeOpenedSockets { watch.watch($0) }
    return (session, watch)
}

/// A body large enough to arrive in several reads, different per request.
func finishedBody(_ name: String?) -> String {
    String(repeating: "request \(name ?? "?") finished; ", count: 4_000)
}

/// An event stream's error as `transport <code>: <message>`, or the error as it is.
func describe(_ error: any Error) -> String {
    if case .transport(let transport) = error as? EventStreamError { return "transport \(transport.code): \(transport.message)" }
    return "\(error)"
}

let refusedMessage = "the session is shutting down gracefully and accepts no new requests; nothing was sent"
let queuedMessage =
    "the request was queued for a connection when the session began shutting down gracefully and never started; nothing was sent"

let eventStreamHead = Array("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n".utf8)

let quietLogger: Logger = {
    var logger = Logger(label: "curlew.tests.service-group")
    logger.logLevel = .warning
    return logger
}()
