// Curlew — graceful shutdown in the loop's state machine, event by event, without sockets: every phase a
// transfer can be in when the drain begins, and every way the drain ends.

@testable import CurlewEngine
import Testing



/// Where one transfer is when the drain begins, and what the drain does to it there.
struct DrainStartCase: Sendable, CustomTestStringConvertible {
    let queued: Bool
    let eventStream: Bool
    let actions: [String]
    let stillRunning: Bool

    var testDescription: String { "\(queued ? "queued" : "running") \(eventStream ? "event stream" : "request")" }
}

@Suite struct TransferStateMachineDrainTests {
    // MARK: The drain begins × each phase and kind of transfer

    @Test(arguments: [
        DrainStartCase(queued: true, eventStream: false, actions: ["fail x queuedAtShutdown"], stillRunning: false),
        DrainStartCase(queued: true, eventStream: true, actions: ["fail x queuedAtShutdown"], stillRunning: false),
        DrainStartCase(queued: false, eventStream: false, actions: [], stillRunning: true),
        DrainStartCase(queued: false, eventStream: true, actions: ["abort x eventStreamAtShutdown", "drained"], stillRunning: false),
    ])
    func theDrainBeginning(with transfer: DrainStartCase) throws {
        var h = Harness(perKey: 1)
        // `holder` takes the key's one place when `x` must wait.
        let (holder, _) = transfer.queued ? h.submit("holder") : (nil, [])
        let (x, started) = h.submit("x", eventStream: transfer.eventStream)
        #expect(started == (transfer.queued ? [] : ["start x shard 0"]))
        #expect(h.drain(within: 10 * second) == transfer.actions)
        #expect(h.machine.phase(of: try #require(x)) == (transfer.stillRunning ? .running(shard: 0) : .free))
        #expect(h.machine.queued == 0)
        #expect(h.machine.running == (transfer.stillRunning || holder != nil ? 1 : 0))
        #expect(h.machine.drainPhase == (h.machine.running == 0 ? .drained : .draining(deadline: h.now + 10 * second)))
    }

    @Test func aDrainWithNothingInFlightIsDrainedAtOnce() {
        var h = Harness()
        #expect(h.drain(within: 10 * second) == ["drained"])
        #expect(h.machine.drainPhase == .drained)
        #expect(h.machine.nextDeadline == nil)
    }

    @Test func queuedTransfersFailBeforeRunningEventStreamsEndSoNoneIsAdmitted() {
        var h = Harness(perKey: 1)
        _ = h.submit("e1", eventStream: true)
        _ = h.submit("r2")
        _ = h.submit("r3")
        #expect(h.drain(within: 10 * second) == ["fail r2 queuedAtShutdown", "fail r3 queuedAtShutdown", "abort e1 eventStreamAtShutdown", "drained"])
        #expect(h.machine.running == 0)
    }

    // MARK: Draining × submissions

    @Test func aNewSubmissionIsRefusedWithoutStartingOrQueueing() {
        var h = Harness(perKey: 1)
        _ = h.submit("r1")
        #expect(h.drain(within: 10 * second) == [])
        let (id, actions) = h.submit("r2")
        #expect(id == nil)
        #expect(actions == ["fail r2 refused"])
        #expect(h.machine.running == 1)
        #expect(h.machine.queued == 0)
    }

    @Test func theNextHopOfARedirectInFlightGoesOnButAnEventStreamsHopIsRefused() throws {
        var h = Harness()
        let (r1, _) = h.submit("r1")
        #expect(h.drain(within: 10 * second) == [])
        let (hop, hopActions) = h.submit("hop", hop: true)
        #expect(hopActions == ["start hop shard 0"])
        #expect(h.machine.phase(of: try #require(hop)) == .running(shard: 0))
        let (streamHop, streamActions) = h.submit("streamHop", hop: true, eventStream: true)
        #expect(streamHop == nil)
        #expect(streamActions == ["fail streamHop refused"])
        #expect(h.complete(r1) == ("r1", []))
        #expect(h.complete(hop) == ("hop", ["drained"]))
    }

    @Test func aHopWaitingForAPlaceStartsWhenOneIsFreed() {
        var h = Harness(perKey: 1)
        let (r1, _) = h.submit("r1")
        #expect(h.drain(within: 10 * second) == [])
        let (hop, actions) = h.submit("hop", hop: true)
        #expect(actions == [])
        #expect(h.complete(r1) == ("r1", ["start hop shard 0"]))
        #expect(h.complete(hop) == ("hop", ["drained"]))
    }

    @Test func everySubmissionIsRefusedOnceDrained() {
        var h = Harness()
        #expect(h.drain(within: second) == ["drained"])
        #expect(h.submit("hop", hop: true).1 == ["fail hop refused"])
        #expect(h.submit("r1").1 == ["fail r1 refused"])
    }

    // MARK: Draining × the transfers left

    @Test func theLastTransferToFinishDrainsTheMachine() {
        var h = Harness()
        let (r1, _) = h.submit("r1")
        let (r2, _) = h.submit("r2")
        #expect(h.drain(within: 10 * second) == [])
        #expect(h.complete(r1) == ("r1", []))
        #expect(h.complete(r2) == ("r2", ["drained"]))
        #expect(h.complete(r2) == (nil, []))
        #expect(h.machine.drainPhase == .drained)
    }

    @Test func aCancellationOrATimeoutCanEndTheLastTransfer() {
        var h = Harness()
        let (r1, _) = h.submit("r1")
        _ = h.submit("r2", deadline: h.now + 2 * second)
        #expect(h.drain(within: 10 * second) == [])
        #expect(h.cancel(r1) == ["abort r1 cancelled"])
        #expect(h.machine.nextDeadline == h.now + 2 * second)
        #expect(h.advance(to: h.now + 2 * second) == ["abort r2 totalTimeout", "drained"])
    }

    @Test func theDeadlineEndsWhatIsLeftWaitingHopsFirstThenDrains() {
        var h = Harness(perKey: 1)
        let start = h.now
        _ = h.submit("r1")
        #expect(h.drain(within: 2 * second) == [])
        _ = h.submit("hop", hop: true)
        #expect(h.machine.nextDeadline == start + 2 * second)
        #expect(h.advance(to: start + 2 * second - 1) == [])
        #expect(h.advance(to: start + 2 * second) == ["fail hop shutdownDeadline", "abort r1 shutdownDeadline", "drained"])
        #expect(h.machine.running == 0)
        #expect(h.machine.queued == 0)
        #expect(h.machine.nextDeadline == nil)
    }

    @Test func aDeadlineAlreadyPassedEndsEverythingAtOnce() {
        var h = Harness()
        _ = h.submit("r1")
        #expect(h.drain(within: 0) == ["abort r1 shutdownDeadline", "drained"])
    }

    @Test func aSoonerSecondDeadlineHoldsAndALaterOneDoesNot() {
        var h = Harness()
        let start = h.now
        _ = h.submit("r1")
        #expect(h.drain(within: 10 * second) == [])
        #expect(h.drain(within: 20 * second) == [])
        #expect(h.machine.drainPhase == .draining(deadline: start + 10 * second))
        #expect(h.drain(within: 3 * second) == [])
        #expect(h.machine.drainPhase == .draining(deadline: start + 3 * second))
        #expect(h.advance(to: start + 3 * second) == ["abort r1 shutdownDeadline", "drained"])
        #expect(h.drain(within: second) == [])
    }

    // MARK: Shutdown × draining

    @Test func anImmediateShutdownWhileDrainingAbortsTheRest() {
        var h = Harness()
        _ = h.submit("r1")
        #expect(h.drain(within: 10 * second) == [])
        #expect(h.shutdown() == ["abort r1 shutdown"])
        #expect(h.submit("r2").1 == ["fail r2 shutdown"])
    }

    @Test func aDrainAfterShutdownDoesNothing() {
        var h = Harness()
        _ = h.submit("r1")
        #expect(h.shutdown() == ["abort r1 shutdown"])
        #expect(h.drain(within: 10 * second) == [])
        #expect(h.machine.drainPhase == .serving)
    }
}
