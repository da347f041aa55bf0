// Curlew — the loop's state machine, event by event, without sockets: every (phase, event) pair.

@testable import CurlewEngine
import Testing

let second: UInt64 = 1_000_000_000

@Suite struct TransferStateMachineTests {
    // MARK: Not yet submitted × submit

    @Test func submitWithRoomStartsAtOnce() throws {
        var h = Harness(perKey: 2)
        let (id, actions) = h.submit("r1", deadline: h.now + 5 * second)
        #expect(actions == ["start r1 shard 0 timeout 5000000000"])
        #expect(h.machine.phase(of: try #require(id)) == .running(shard: 0))
        #expect(h.machine.running == 1)
        #expect(h.machine.nextDeadline == h.now + 5 * second)
    }

    @Test func submitWithoutRoomQueues() throws {
        var h = Harness(perKey: 1)
        _ = h.submit("r1")
        let (id, actions) = h.submit("r2")
        #expect(actions == [])
        #expect(h.machine.phase(of: try #require(id)) == .queued)
        #expect(h.machine.queued == 1)
        #expect(h.machine.counts(for: "a") == (queued: 1, running: 1))
    }

    @Test func submitOfACancelledTaskFailsWithoutStarting() {
        var h = Harness()
        let (id, actions) = h.submit("r1", cancelled: true)
        #expect(id == nil)
        #expect(actions == ["fail r1 cancelled"])
        #expect(h.machine.running == 0)
    }

    @Test func submitPastItsDeadlineTimesOut() {
        var h = Harness()
        let (id, actions) = h.submit("r1", deadline: h.now)
        #expect(id == nil)
        #expect(actions == ["fail r1 totalTimeout"])
    }

    @Test func submitAfterShutdownFails() {
        var h = Harness()
        #expect(h.shutdown() == [])
        let (id, actions) = h.submit("r1")
        #expect(id == nil)
        #expect(actions == ["fail r1 shutdown"])
    }

    // MARK: Queued × every event

    @Test func cancelWhileQueuedFailsAtOnceAndKeepsTheOthersWaiting() throws {
        var h = Harness(perKey: 1)
        let (first, _) = h.submit("r1")
        let (second, _) = h.submit("r2")
        let (third, _) = h.submit("r3")
        #expect(h.cancel(second) == ["fail r2 cancelled"])
        #expect(h.machine.queued == 1)
        #expect(h.machine.phase(of: try #require(second)) == .free)
        // The cancelled one is skipped: r3 is next.
        #expect(h.complete(first).1 == ["start r3 shard 0"])
        #expect(h.machine.phase(of: try #require(third)) == .running(shard: 0))
    }

    @Test func completionOfAQueuedTransferIsIgnored() throws {
        var h = Harness(perKey: 1)
        _ = h.submit("r1")
        let (queued, _) = h.submit("r2")
        let (payload, actions) = h.complete(queued)
        #expect(payload == nil)
        #expect(actions == [])
        #expect(h.machine.phase(of: try #require(queued)) == .queued)
    }

    @Test func totalTimeoutWhileQueuedCountsTheWait() throws {
        var h = Harness(perKey: 1)
        _ = h.submit("r1")
        let (queued, _) = h.submit("r2", deadline: h.now + 2 * second)
        #expect(h.advance(to: h.now + 2 * second - 1) == [])
        #expect(h.advance(to: h.now + 1) == ["fail r2 totalTimeout"])
        #expect(h.machine.phase(of: try #require(queued)) == .free)
        #expect(h.machine.queued == 0)
    }

    @Test func idleCheckOfAQueuedTransferIsIgnored() throws {
        var h = Harness(perKey: 1, idle: second)
        _ = h.submit("r1")
        let (queued, _) = h.submit("r2")
        #expect(h.idleCheck(queued, lastActivity: 0) == [])
        #expect(h.machine.phase(of: try #require(queued)) == .queued)
    }

    @Test func aFreedPlaceStartsTheNextWaitingWithWhatIsLeftOfItsTimeout() {
        var h = Harness(perKey: 1)
        let (first, _) = h.submit("r1")
        _ = h.submit("r2", deadline: h.now + 10 * second)
        h.now += 3 * second
        #expect(h.complete(first) == ("r1", ["start r2 shard 0 timeout 7000000000"]))
    }

    @Test func shutdownFailsQueuedAndAbortsRunning() throws {
        var h = Harness(perKey: 1)
        let (running, _) = h.submit("r1")
        let (queued, _) = h.submit("r2")
        #expect(h.shutdown() == ["abort r1 shutdown", "fail r2 shutdown"])
        #expect(h.machine.phase(of: try #require(running)) == .free)
        #expect(h.machine.phase(of: try #require(queued)) == .free)
        #expect(h.machine.running == 0)
        #expect(h.machine.queued == 0)
        #expect(h.shutdown() == [])
    }

    // MARK: Running × every event

    @Test func cancelWhileRunningAbortsAndAdmitsTheNext() {
        var h = Harness(perKey: 1)
        let (first, _) = h.submit("r1")
        _ = h.submit("r2")
        #expect(h.cancel(first) == ["abort r1 cancelled", "start r2 shard 0"])
    }

    @Test func completionReturnsThePayloadAndAdmitsTheNext() {
        var h = Harness(perKey: 1)
        let (first, _) = h.submit("r1")
        _ = h.submit("r2")
        #expect(h.complete(first) == ("r1", ["start r2 shard 0"]))
        #expect(h.machine.running == 1)
    }

    @Test func aStartCurlRefusedFreesItsPlace() {
        var h = Harness(perKey: 1)
        let (first, _) = h.submit("r1")
        _ = h.submit("r2")
        #expect(h.startFailed(first) == ("r1", ["start r2 shard 0"]))
    }

    @Test func totalTimeoutWhileRunningAborts() {
        var h = Harness()
        _ = h.submit("r1", deadline: h.now + second)
        #expect(h.advance(to: h.now + second) == ["abort r1 totalTimeout"])
        #expect(h.machine.running == 0)
        #expect(h.machine.nextDeadline == nil)
    }

    @Test func idleTimerAsksForActivityThenAbortsOnlyWhenIdleLongEnough() {
        var h = Harness(idle: 2 * second)
        let start = h.now
        let (id, _) = h.submit("r1")
        #expect(h.machine.nextDeadline == start + 2 * second)
        #expect(h.advance(to: start + 2 * second) == ["checkIdle"])
        // A byte arrived 1.5 s after the start: not idle for 2 s yet; checked again at 3.5 s.
        #expect(h.idleCheck(id, lastActivity: start + 3 * second / 2) == [])
        #expect(h.machine.nextDeadline == start + 7 * second / 2)
        #expect(h.advance(to: start + 7 * second / 2) == ["checkIdle"])
        #expect(h.idleCheck(id, lastActivity: start + 3 * second / 2) == ["abort r1 idleTimeout"])
    }

    @Test func shutdownAbortsRunning() {
        var h = Harness()
        _ = h.submit("r1")
        #expect(h.shutdown() == ["abort r1 shutdown"])
    }

    // MARK: Ended × every event

    @Test func eventsAfterTheEndAreIgnored() throws {
        var h = Harness(perKey: 1, idle: second)
        let (id, _) = h.submit("r1", deadline: h.now + 5 * second)
        #expect(h.complete(id) == ("r1", []))
        #expect(h.cancel(id) == [])  // cancel after completion
        #expect(h.complete(id) == (nil, []))
        #expect(h.startFailed(id) == (nil, []))
        #expect(h.idleCheck(id, lastActivity: 0) == [])
        #expect(h.advance(to: h.now + 10 * second) == [])  // its stale timers fire into nothing
        #expect(h.shutdown() == [])
        #expect(h.machine.phase(of: try #require(id)) == .free)
    }

    @Test func aReusedSlotDoesNotTakeEventsMeantForItsPreviousTransfer() throws {
        var h = Harness()
        let (old, _) = h.submit("r1")
        _ = h.complete(old)
        let (new, _) = h.submit("r2")
        #expect(old?.slot == new?.slot)
        #expect(h.cancel(old) == [])
        #expect(h.machine.phase(of: try #require(new)) == .running(shard: 0))
    }

    // MARK: Admission across keys

    @Test func aHostAtItsLimitNeverDelaysAnother() {
        var h = Harness(perKey: 2)
        _ = h.submit("a1", key: "a")
        _ = h.submit("a2", key: "a")
        #expect(h.submit("a3", key: "a").1 == [])
        #expect(h.submit("b1", key: "b").1 == ["start b1 shard 0"])
        #expect(h.machine.keyCounts.map { "\($0.key) \($0.queued) \($0.running)" } == ["a 1 2", "b 0 1"])
    }

    @Test func theTotalLimitAdmitsWaitingTransfersOldestFirstAcrossHosts() {
        var h = Harness(total: 2)
        let (a1, _) = h.submit("a1", key: "a")
        let (b1, _) = h.submit("b1", key: "b")
        _ = h.submit("c1", key: "c")
        _ = h.submit("a2", key: "a")
        _ = h.submit("c2", key: "c")
        #expect(h.complete(b1).1 == ["start c1 shard 0"])
        #expect(h.complete(a1).1 == ["start a2 shard 0"])
    }

    @Test func aRedirectHopGoesAheadOfWaitingTransfers() {
        var h = Harness(perKey: 1)
        let (first, _) = h.submit("r1")
        _ = h.submit("r2")
        _ = h.submit("hop", hop: true)
        #expect(h.complete(first).1 == ["start hop shard 0"])
    }

    @Test func cancellingAThousandQueuedTransfersTouchesNoQueue() {
        var h = Harness(perKey: 1)
        let (running, _) = h.submit("first")
        let ids = (0..<1000).map { h.submit("q\($0)").0 }
        for (index, id) in ids.enumerated() {
            #expect(h.cancel(id) == ["fail q\(index) cancelled"])
        }
        #expect(h.machine.queued == 0)
        // The stale identifiers are dropped as they surface: nothing is started for them.
        #expect(h.complete(running).1 == [])
        #expect(h.submit("last").1 == ["start last shard 0"])
    }

    // MARK: Shards

    @Test func spreadableTransfersFillShardsInTurn() {
        var h = Harness(shardSize: 2)
        let shards = (0..<5).map { h.submit("r\($0)", spreadable: true).1 }
        #expect(shards == [["start r0 shard 0"], ["start r1 shard 0"], ["start r2 shard 1"], ["start r3 shard 1"], ["start r4 shard 2"]])
        #expect(h.machine.shardRunning == [2, 2, 1])
    }

    @Test func aHostThatMayNotSpreadStaysInItsHomeShard() {
        var h = Harness(shardSize: 2)
        _ = h.submit("x0", key: "x", spreadable: true)
        _ = h.submit("x1", key: "x", spreadable: true)
        // Host a gets the least busy shard with room (a new one: shard 0 is full), and keeps it.
        let homes = (0..<4).map { h.submit("a\($0)", key: "a").1 }
        #expect(homes == [["start a0 shard 1"], ["start a1 shard 1"], ["start a2 shard 1"], ["start a3 shard 1"]])
    }

    /// Keys held to HTTP/1.1 on hosts the others reach over HTTP/2 share a shard (and so a connection cache)
    /// that no other key gets, whether it is busy or idle, spread or not.
    @Test func isolatedKeysHaveAShardOfTheirOwn() {
        var h = Harness(shardSize: 2)
        #expect(h.submit("h2", key: "a", multiplex: true).1 == ["start h2 shard 0"])
        #expect(h.submit("h1", key: "a/1.1", isolated: true).1 == ["start h1 shard 1"])
        #expect(h.submit("other h1", key: "b/1.1", isolated: true).1 == ["start other h1 shard 1"])
        #expect(h.machine.isolatedShard == 1)
        // Shard 1 is full and shard 0 has room: a new host still never lands in the isolated shard...
        #expect(h.submit("b", key: "b").1 == ["start b shard 0"])
        // ...nor a spread transfer, once shard 0 is full too.
        #expect(h.submit("spread", key: "c", spreadable: true).1 == ["start spread shard 2"])
        // An isolated key keeps its shard when it is over the size.
        #expect(h.submit("third h1", key: "a/1.1", isolated: true).1 == ["start third h1 shard 1"])
        #expect(h.machine.shardRunning == [2, 3, 1])
    }

    // MARK: Multiplexing (HTTP/2)

    @Test func aHostThatMayMultiplexStartsWithOneBurstThenStreamsWithOneNewConnectionAtATime() {
        var h = Harness(perKey: 4)
        let starts = (0..<10).map { h.submit("r\($0)", multiplex: true).1 }
        // Protocol unknown: at most min(perKey, 100) at once, which share the first connection.
        #expect(starts.prefix(4).allSatisfy { $0.count == 1 })
        #expect(starts.dropFirst(4).allSatisfy { $0.isEmpty })
        #expect(h.machine.mode(of: "a") == .unknown)
        // HTTP/2 with 3 streams on the one open connection: full, so one transfer opens a second.
        #expect(h.learned(multiplexes: true, streams: 3, open: 1) == ["start r4 shard 0 opens"])
        #expect(h.machine.mode(of: "a") == .multiplexed(streams: 3))
        // The second connection opens but adds no room until its first response: libcurl 7.88 would open
        // a connection of its own for every transfer that found the first full and this one connecting.
        #expect(h.connections(2) == [])
        #expect(h.machine.counts(for: "a") == (queued: 5, running: 5))
        // The opener's response arrives: one more stream fits (6), then the next opens a third connection.
        #expect(h.ready() == ["start r5 shard 0", "start r6 shard 0 opens"])
        #expect(h.connections(3) == [])
        // The third answers: two more streams fit, and the last opens the fourth (perKey).
        #expect(h.ready() == ["start r7 shard 0", "start r8 shard 0", "start r9 shard 0 opens"])
        #expect(h.machine.counts(for: "a") == (queued: 0, running: 10))
        #expect(h.connections(4) == [])
        #expect(h.submit("r10", multiplex: true).1 == [])
        // The fourth answers: r10 and one more fit (12 streams); then only freed streams admit more.
        #expect(h.ready() == ["start r10 shard 0"])
        #expect(h.submit("r11", multiplex: true).1 == ["start r11 shard 0"])
        #expect(h.submit("r12", multiplex: true).1 == [])
        #expect(h.machine.counts(for: "a") == (queued: 1, running: 12))
    }

    @Test func aHostThatTurnsOutToBeHTTP1GetsItsConnectionLimit() {
        var h = Harness(perKey: 4)
        for n in 0..<6 { _ = h.submit("r\(n)", multiplex: true) }
        #expect(h.machine.counts(for: "a") == (queued: 2, running: 4))
        #expect(h.learned(multiplexes: false) == [])
        #expect(h.machine.mode(of: "a") == .single)
        #expect(h.machine.counts(for: "a") == (queued: 2, running: 4))
    }

    @Test func anUnexpectedConnectionLowersTheStreamsPerConnection() {
        var h = Harness()
        for n in 0..<10 { _ = h.submit("r\(n)", multiplex: true) }
        // All ten wait for the first connection; it answers over HTTP/2 with ten streams in use (the cap).
        _ = h.learned(multiplexes: true, streams: 10, open: 1, attached: 10)
        #expect(h.machine.mode(of: "a") == .multiplexed(streams: 10))
        #expect(h.machine.counts(for: "a").running == 10)
        // curl opened a connection for a transfer not admitted to: only 7 fitted on the first one.
        _ = h.connections(2, unexpected: true, attached: 7)
        #expect(h.machine.mode(of: "a") == .multiplexed(streams: 7))
    }

    // MARK: Finding a server's stream limit

    @Test(arguments: [(100, 5), (128, 4), (256, 2)])
    func aColdBurstFindsTheServersStreamLimit(limit: Int, connections: Int) {
        let cap = 256
        var h = Harness()
        var started = 0
        for n in 0..<500 { started += h.submit("r\(n)", multiplex: true).1.count }
        // Protocol unknown: the first 100 share the first connection.
        #expect(started == 100)
        // HTTP/2: 100 streams fit so far; the next transfer probes for a 101st.
        #expect(h.learned(multiplexes: true, streams: cap, open: 1, attached: 100) == ["start r100 shard 0 probes"])
        #expect(h.machine.mode(of: "a") == .multiplexed(streams: 100))
        // Each probe curl puts on the connection raises the count and lets the next probe start.
        var streams = 100
        var next = 101
        while streams < min(limit, cap) {
            let actions = h.probeJoined()
            streams += 1
            if streams < cap {
                #expect(actions == ["start r\(next) shard 0 probes"])
            } else {
                // The cap is reached: the limit is known, and the next transfer opens a connection.
                #expect(actions == ["start r\(next) shard 0 opens"])
            }
            next += 1
        }
        #expect(h.machine.mode(of: "a") == .multiplexed(streams: min(limit, cap)))
        var open = 1
        if limit < cap {
            // curl opened a connection for the probe: the connection carries the server's limit.
            #expect(h.probeOpened(attached: limit, open: 2) == [])
            #expect(h.machine.mode(of: "a") == .multiplexed(streams: limit))
        } else {
            #expect(h.connections(2) == [])
        }
        open = 2
        // From now on connections open one at a time, each filled before the next.
        while h.machine.counts(for: "a").queued > 0 {
            let actions = h.ready()
            #expect(actions.last?.hasSuffix(" opens") == true || h.machine.counts(for: "a").queued == 0)
            if actions.last?.hasSuffix(" opens") == true {
                open += 1
                _ = h.connections(open)
            }
        }
        #expect(h.machine.counts(for: "a") == (queued: 0, running: 500))
        #expect(open == connections)
    }

    @Test func aNewConnectionCarriesWhatLibcurlAllowsBeforeTheServersSettings() {
        var h = Harness()
        var ids: [String: TransferID] = [:]
        for n in 0..<400 {
            let (id, _) = h.submit("r\(n)", multiplex: true)
            ids["r\(n)"] = id
        }
        // A 128-stream server: the first connection is full, and r128 opens the second.
        _ = h.learned(multiplexes: true, streams: 128, open: 1, attached: 100)
        for _ in 100..<128 { _ = h.probeJoined() }
        #expect(h.machine.mode(of: "a") == .multiplexed(streams: 128))
        #expect(h.machine.counts(for: "a").running == 129)
        _ = h.connections(2)
        // Its connection is up: libcurl lets it carry 100 streams until the server's settings arrive, so
        // 99 more join it (with r128, 100); the other 28 wait for its response.
        #expect(h.up(ids["r128"]).count == 99)
        #expect(h.machine.counts(for: "a").running == 228)
        // An event about an earlier opener changes nothing.
        #expect(h.up(ids["r0"]) == [])
        #expect(h.ready().count == 29)  // 28 streams, and r257 opens the third connection
        #expect(h.machine.counts(for: "a").running == 257)
    }

    @Test func aFirstBurstThatOverflowedTellsTheLimit() {
        var h = Harness()
        for n in 0..<20 { _ = h.submit("r\(n)", multiplex: true) }
        // curl opened more connections while 8 were on the first: the server allows 8.
        _ = h.learned(multiplexes: true, streams: 256, open: 5, attached: 20, overflow: 8)
        #expect(h.machine.mode(of: "a") == .multiplexed(streams: 8))
    }

    @Test func aProbeThatMayHaveTakenAFreedStreamRaisesNothing() {
        var h = Harness()
        var ids: [TransferID?] = []
        for n in 0..<101 { ids.append(h.submit("r\(n)", multiplex: true).0) }
        #expect(h.learned(multiplexes: true, streams: 256, open: 1, attached: 100) == ["start r100 shard 0 probes"])
        // A stream ends before curl places the probe: r100 may take its place.
        #expect(h.complete(ids[0]).1 == [])
        #expect(h.submit("r101", multiplex: true).1 == [])
        #expect(h.probeJoined() == ["start r101 shard 0 probes"])
        #expect(h.machine.mode(of: "a") == .multiplexed(streams: 100))
        // A probe that ends before curl placed it lets the next one try.
        #expect(h.submit("r102", multiplex: true).1 == [])
        #expect(h.probeEnded() == ["start r102 shard 0 probes"])
    }

    @Test func theTotalLimitCountsTheConnectionsOfAMultiplexingKey() {
        var h = Harness(total: 1)
        let (first, _) = h.submit("a0", key: "a", multiplex: true)
        #expect(h.learned(multiplexes: true, streams: 3, open: 1, for: "a") == [])
        // The server takes a second and a third stream (the client's cap): probes go even when the
        // total limit is reached, since they most often join a connection.
        #expect(h.submit("a1", key: "a", multiplex: true).1 == ["start a1 shard 0 probes"])
        #expect(h.probeJoined(for: "a") == [])
        #expect(h.submit("a2", key: "a", multiplex: true).1 == ["start a2 shard 0 probes"])
        #expect(h.probeJoined(for: "a") == [])
        #expect(h.machine.mode(of: "a") == .multiplexed(streams: 3))
        // A fourth stream of a would need a second connection, as would b's first request.
        #expect(h.submit("a3", key: "a", multiplex: true).1 == [])
        #expect(h.submit("b0", key: "b").1 == [])
        #expect(h.machine.connections == 1)
        // A stream frees on a's connection: a3 (the oldest waiting) joins it; b still needs a connection.
        #expect(h.complete(first).1 == ["start a3 shard 0"])
        #expect(h.machine.counts(for: "b") == (queued: 1, running: 0))
    }

    // MARK: Streams: pause bits, idleness while paused, the total timeout ending with the head

    @Test func everyPauseCallPassesBothDirections() throws {
        var h = Harness()
        let (id, _) = h.submit("r1")
        h.paused(id, .receive)
        h.paused(id, .send)
        #expect(h.machine.pauseState(of: try #require(id)).map { [$0.receive, $0.send] } == [true, true])
        // The consumer made room: receive resumes, send stays paused, and both are passed.
        #expect(h.resume(id, .receive) == ["setPause receive false send true"])
        // The producer wrote: send resumes with receive as it is now.
        #expect(h.resume(id, .send) == ["setPause receive false send false"])
        h.paused(id, .receive)
        #expect(h.resume(id, .send) == ["setPause receive true send false"])
    }

    @Test func aResumeForADirectionCurlNeverPausedStillTellsCurl() {
        // A lost pause event must not leave curl paused for good: a resume always reaches curl.
        var h = Harness()
        let (id, _) = h.submit("r1")
        #expect(h.resume(id, .receive) == ["setPause receive false send false"])
    }

    @Test func pauseEventsForQueuedOrEndedTransfersAreIgnored() throws {
        var h = Harness(perKey: 1)
        let (running, _) = h.submit("r1")
        let (queued, _) = h.submit("r2")
        h.paused(queued, .receive)
        #expect(h.resume(queued, .receive) == [])
        _ = h.complete(running)
        h.paused(running, .receive)
        #expect(h.resume(running, .receive) == [])
        #expect(h.machine.pauseState(of: try #require(running)) == nil)
    }

    @Test func aPausedTransferIsNeverIdle() {
        var h = Harness(idle: 2 * second)
        let start = h.now
        let (id, _) = h.submit("r1")
        h.paused(id, .receive)
        // Nothing moved for 10 s, but the consumer holds the stream: checked again an idle period later.
        #expect(h.advance(to: start + 10 * second) == ["checkIdle"])
        #expect(h.idleCheck(id, lastActivity: start) == [])
        #expect(h.machine.nextDeadline == start + 12 * second)
        // Resumed at 11 s: idle time counts from then, not from the last byte.
        h.now = start + 11 * second
        #expect(h.resume(id, .receive) == ["setPause receive false send false"])
        #expect(h.machine.nextDeadline == start + 13 * second)
        #expect(h.advance(to: start + 12 * second) == [])
        #expect(h.advance(to: start + 13 * second) == ["checkIdle"])
        #expect(h.idleCheck(id, lastActivity: start) == ["abort r1 idleTimeout"])
    }

    @Test func aProducerWithNothingToSendIsNotIdleEither() {
        var h = Harness(idle: 2 * second)
        let start = h.now
        let (id, _) = h.submit("r1")
        h.paused(id, .send)
        #expect(h.advance(to: start + 5 * second) == ["checkIdle"])
        #expect(h.idleCheck(id, lastActivity: start) == [])
        #expect(h.machine.running == 1)
    }

    @Test func theTotalTimeoutOfAStreamEndsWithItsHead() {
        var h = Harness(idle: nil)
        let start = h.now
        let (id, _) = h.submit("r1", deadline: start + 2 * second)
        h.headArrived(id)
        #expect(h.machine.nextDeadline == nil)
        #expect(h.advance(to: start + 60 * second) == [])
        #expect(h.machine.running == 1)
    }

    @Test func theHeadKeepsTheIdleTimer() {
        var h = Harness(idle: 5 * second)
        let start = h.now
        let (id, _) = h.submit("r1", deadline: start + 2 * second)
        #expect(h.machine.nextDeadline == start + 2 * second)
        h.headArrived(id)
        #expect(h.machine.nextDeadline == start + 5 * second)
    }
}
