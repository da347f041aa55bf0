// Curlew — an event stream whose reader stops reading pauses its own transfer, like any streamed body,
// and does not stall the other streams of its session: over HTTP/2 the streams sharing its connection keep
// going (Streaming.md, "Memory held per stream"); over HTTP/1.1 each stream has a connection of its own.
//
// No duration is asserted: every wait is bounded and matters only when a test fails.

@testable import CurlewEngine
import CurlewTestSupport
import Foundation
import Testing

private func newKey() -> String { UUID().uuidString }

/// One attempt, no reconnection: each sequence ends with nil when its body ends.
private let once = EventStreamPolicy(reconnects: false)

/// The held stream's burst: 8 MiB in events of about 1 KiB each (1,000 bytes of data, plus `id: N\n`,
/// `data: `, and the line ends).
private let burstCount = 8192
private let burstData = String(repeating: "x", count: 1000)

/// The sibling's events, 50 ms apart: it runs for about a second while the held stream's burst is sent.
private let siblingCount = 20

/// What the held stream's reader saw.
private struct HeldReading: Sendable {
    var events: [ServerSentEvents.Event] = []
    var ended = false
    var error: EventStreamError?
}

@Suite struct EventStreamBackpressureTests {
    /// Stream A sends one event, then (once B has arrived too) a burst of 8 MiB; its reader reads the first
    /// event and then holds the iterator without calling `next()`. Stream B, on the same session, sends 20
    /// events 50 ms apart: its reader receives all of them and the end while A is held. Over HTTP/2 both
    /// streams are on one connection. Then A is let go and read to its end: every event, in order.
    ///
    /// A's transfer is still running while it is held (`activeTransfers` is 1 once B's transfer has
    /// left): the engine neither took A's whole body nor failed it. The session's statistics have no
    /// count of paused transfers, and ``SessionStatistics/bufferedBytes`` counts only bodies collected
    /// in memory, not streamed ones, so the pause itself is not observable here.
    ///
    /// Over HTTP/2 on a libcurl before 7.88, where a paused stream would stall its connection, each event
    /// stream goes over HTTP/1.1 on a connection of its own (``CurlQuirks/pausedHTTP2StreamStallsConnection``);
    /// that fallback is also run forced, which holds on every version.
    @Test(arguments: [(Wire.http1, false), (.http2, false), (.http2, true)])
    func anEventStreamNotReadDoesNotStallTheOtherStreams(wire: Wire, ownConnectionsForced: Bool) async throws {
        var sharesConnection = wire == .http2
        try await withSSEServerAndSession(wire, ownServer: true, configure: {
            if ownConnectionsForced { $0.quirks.pausedHTTP2StreamStallsConnection = true }
            sharesConnection = wire == .http2 && !$0.quirks.streamedResponsesAvoidHTTP2
        }) { server, session in
            let gather = newKey()
            let heldKey = newKey()
            let siblingKey = newKey()
            let heldPlan = SSEPlan([
                SSEAttempt([.send("id: 0\ndata: first\n\n"), .gather(gather, count: 2), .numbered(burstData, count: burstCount)])
            ])
            let siblingPlan = SSEPlan([SSEAttempt([.gather(gather, count: 2), .numbered("b", count: siblingCount, every: 50)])])

            let held = session.events(for: TransportRequest(url: server.url(key: heldKey, plan: heldPlan)), policy: once)
            let firstRead = Gate()
            let release = Gate()
            let done = Gate()
            let holder = Task { () -> HeldReading in
                defer {
                    firstRead.open()
                    done.open()
                }
                var reading = HeldReading()
                var iterator = held.makeAsyncIterator()
                do throws(EventStreamError) {
                    guard let first = try await iterator.next() else {
                        reading.ended = true
                        return reading
                    }
                    reading.events.append(first)
                    firstRead.open()
                    // Held: no `next()` until the test lets go.
                    await release.wait()
                    while let event = try await iterator.next() { reading.events.append(event) }
                    reading.ended = true
                } catch {
                    reading.error = error
                }
                return reading
            }

            let reading = try await ensuring({ () -> HeldReading? in
                guard await eventually({ firstRead.isOpen }), !done.isOpen else {
                    Issue.record("the held stream gave no first event")
                    return nil
                }

                // B, while A is held.
                let sibling = await readEvents(
                    session.events(for: TransportRequest(url: server.url(key: siblingKey, plan: siblingPlan)), policy: once))
                #expect(sibling.events == (1...siblingCount).map { ServerSentEvents.Event(data: "b", id: "\($0)") })
                #expect(sibling.ended)
                #expect(sibling.error == nil)
                #expect(!sibling.timedOut)

                // A is still held, neither ended nor failed, and its transfer still runs.
                #expect(!done.isOpen)
                #expect(await eventually { session.statistics.activeTransfers == 1 })
                #expect(session.statistics.failedTransfers == 0)
                #expect(session.statistics.cancelledTransfers == 0)

                // The server records B's end just after writing it: B's reader may see it first.
                let during = try await server.stats { $0.records(siblingKey).first?.outcome != nil }
                let heldRecords = during.records(heldKey)
                let siblingRecords = during.records(siblingKey)
                #expect(heldRecords.count == 1)
                #expect(siblingRecords.count == 1)
                #expect(heldRecords.first?.gathered == true)
                #expect(siblingRecords.first?.gathered == true)
                #expect(siblingRecords.first?.outcome == "finished")
                let protocolName = sharesConnection ? "h2" : "http/1.1"
                #expect(heldRecords.first?.protocol == protocolName)
                #expect(siblingRecords.first?.protocol == protocolName)
                if let heldConnection = heldRecords.first?.connection, let siblingConnection = siblingRecords.first?.connection {
                    if sharesConnection {
                        #expect(heldConnection == siblingConnection)
                    } else {
                        #expect(heldConnection != siblingConnection)
                    }
                }
                print("\(wire)\(ownConnectionsForced ? " (own connections forced)" : ""): while A was held, the server's A attempt: \(heldRecords.first?.outcome ?? "still writing")")

                // Let A go: it reads to its end.
                release.open()
                guard await eventually(within: 60, { done.isOpen }) else {
                    Issue.record("the released stream did not reach its end")
                    holder.cancel()
                    return nil
                }
                return await holder.value
            }, cleanUp: {
                release.open()
                holder.cancel()
            })
            guard let reading else { return }
            #expect(reading.error == nil)
            #expect(reading.ended)
            #expect(reading.events.count == 1 + burstCount)
            #expect(reading.events.first == ServerSentEvents.Event(data: "first", id: "0"))
            #expect(reading.events.last?.id == "\(burstCount)")
            #expect(reading.events.dropFirst().map(\.id) == (1...burstCount).map { "\($0)" })
            #expect(reading.events.dropFirst().allSatisfy { $0.type == "message" && $0.data == burstData && $0.retry == nil })

            let stats = try await server.stats()
            #expect(stats.records(heldKey).map(\.outcome) == ["finished"])
            let connections = sharesConnection ? 1 : 2
            #expect(stats.connections == connections)
            #expect(stats.protocolErrors == [])
            #expect(stats.refusedStreams == 0)
            #expect(session.statistics.connectionsOpened == connections)
            #expect(session.statistics.peakOpenConnections == connections)
        }
    }
}
