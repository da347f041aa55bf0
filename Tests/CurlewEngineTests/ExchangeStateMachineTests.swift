// Curlew — the exchange's pure state machine, table by table: every state meets every event once, with the
// actions the call returns; then the high mark's growth and the ChunkBuffer.

@testable import CurlewEngine
import HTTPTypes
import Testing

private typealias ESM = ExchangeStateMachine
private typealias ESMResponse = ExchangeStateMachine.ResponseSide
private typealias ESMRequest = ExchangeStateMachine.RequestSide

// MARK: - Fixtures and renderings shared by the tables

/// `count` bytes 1, 2, 3, … (what a fixture holds unread or unsent: one chunk).
private func bytes(_ count: Int, from first: Int = 1) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: first + $0) }
}

private let bodyError = TransportError(.connectionReset, message: "the connection was reset")
private let producerError = TransportError(.requestBodyFailed, message: "the producer threw")

/// How a body ended, comparable.
private enum End: Hashable, Sendable {
    case complete
    case failed(TransportError.Code)

    init(_ end: ESM.BodyEnd) {
        switch end {
        case .complete: self = .complete
        case .failed(let error): self = .failed(error.code)
        }
    }
}

/// What the reader's poll returned, comparable.
private enum Polled: Equatable, Sendable {
    case chunk([UInt8], resumeLoop: Bool)
    case end(End)
    case pending

    init(_ next: ESM.Next) {
        switch next {
        case .chunk(let chunk, let resumeLoop): self = .chunk(chunk, resumeLoop: resumeLoop)
        case .end(let end): self = .end(End(end))
        case .pending: self = .pending
        }
    }
}

/// A (state, event) pair, for the coverage checks.
private struct Pair<State: Hashable, Event: Hashable>: Hashable {
    let state: State
    let event: Event
}

/// Every (state, event) pair of `pairs` is there exactly once.
private func expectEveryPairOnce<State: CaseIterable & Hashable, Event: CaseIterable & Hashable>(
    _ pairs: [Pair<State, Event>], _ table: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    let all = Set(State.allCases.flatMap { state in Event.allCases.map { Pair(state: state, event: $0) } })
    let missing = all.subtracting(pairs).map { "\($0.state) × \($0.event)" }.sorted()
    let twice = Dictionary(grouping: pairs, by: { $0 }).filter { $0.value.count > 1 }.keys
        .map { "\($0.state) × \($0.event)" }.sorted()
    #expect(Set(pairs) == all, "\(table): the rows' pairs are not every state × every event", sourceLocation: sourceLocation)
    #expect(pairs.count == all.count, "\(table): \(pairs.count) rows for \(all.count) pairs", sourceLocation: sourceLocation)
    #expect(missing.isEmpty, "\(table): missing rows \(missing)", sourceLocation: sourceLocation)
    #expect(twice.isEmpty, "\(table): rows given twice \(twice)", sourceLocation: sourceLocation)
}

/// curl's read callback with a buffer of `capacity` bytes: what it is told, the bytes copied, and whether a
/// producer waiting for room is to be resumed.
private func take(_ side: inout ESMRequest, capacity: Int) -> (read: ESM.Read, bytes: [UInt8], resumeProducer: Bool) {
    var buffer = [UInt8](repeating: 0, count: capacity)
    let (read, resume) = buffer.withUnsafeMutableBytes { raw -> (ESM.Read, Bool) in
        guard let base = raw.baseAddress else { return (.failed, false) }
        let result = side.read(into: base, capacity: capacity)
        return (result.0, result.resumeProducer)
    }
    if case .bytes(let count) = read { return (read, Array(buffer[..<count]), resume) }
    return (read, [], resume)
}

// MARK: - The stage table

private enum StageEvent: CaseIterable, Hashable, Sendable {
    case submit
    case cancel
    case registered
    case started
    /// finish(.streamed)
    case finishedWell
    /// finish(.failure(connectionReset))
    case finishedFailing
}

private enum StageResult: Equatable, Sendable {
    case action(ESM.StageAction)
    case registered(cancelNow: Bool)
    case done
    case finish(ESM.FinishAction)
}

private struct StageRow: Sendable {
    let state: ESM.Stage
    let event: StageEvent
    let next: ESM.Stage
    let result: StageResult

    init(_ state: ESM.Stage, _ event: StageEvent, _ next: ESM.Stage, _ result: StageResult) {
        self.state = state
        self.event = event
        self.next = next
        self.result = result
    }
}

/// Ending a transfer that had not ended, with the stage fixture below: its reader waits (resumed), its
/// producer is resumed (its writes fail from now on), the 8 bytes of growth go back to the budget.
private let endsIt = ESM.FinishAction(resumeWaiter: true, resumeProducer: true, returnedGrowth: 8, ended: true)
/// Ending a transfer that had ended: nothing.
private let endedBefore = ESM.FinishAction()

/// Fixture of every row: a machine in the row's stage whose waiter waits, whose response streams (floor 8,
/// cap 32, chunk limit 4; 2 bytes unread; the mark grown by 8 from the budget) and whose stream body's
/// producer is producing (high 8; 2 bytes unsent).
private let stageRows: [StageRow] = [
    .init(.created, .submit, .submitted, .action(.none)),
    .init(.created, .cancel, .cancelling, .action(.none)),  // nobody to tell: submit() fails it
    .init(.created, .registered, .created, .registered(cancelNow: false)),
    .init(.created, .started, .created, .done),
    .init(.created, .finishedWell, .finished, .finish(endsIt)),
    .init(.created, .finishedFailing, .finished, .finish(endsIt)),

    .init(.submitted, .submit, .submitted, .action(.none)),
    .init(.submitted, .cancel, .cancelling, .action(.tellLoopToCancel)),
    .init(.submitted, .registered, .queued, .registered(cancelNow: false)),
    .init(.submitted, .started, .submitted, .done),
    .init(.submitted, .finishedWell, .finished, .finish(endsIt)),
    .init(.submitted, .finishedFailing, .finished, .finish(endsIt)),

    .init(.queued, .submit, .queued, .action(.none)),
    .init(.queued, .cancel, .cancelling, .action(.tellLoopToCancel)),
    .init(.queued, .registered, .queued, .registered(cancelNow: false)),
    .init(.queued, .started, .running, .done),
    .init(.queued, .finishedWell, .finished, .finish(endsIt)),
    .init(.queued, .finishedFailing, .finished, .finish(endsIt)),

    .init(.running, .submit, .running, .action(.none)),
    .init(.running, .cancel, .cancelling, .action(.tellLoopToCancel)),
    .init(.running, .registered, .running, .registered(cancelNow: false)),
    .init(.running, .started, .running, .done),
    .init(.running, .finishedWell, .finished, .finish(endsIt)),
    .init(.running, .finishedFailing, .finished, .finish(endsIt)),

    .init(.cancelling, .submit, .cancelling, .action(.failCancelled)),
    .init(.cancelling, .cancel, .cancelling, .action(.none)),
    .init(.cancelling, .registered, .cancelling, .registered(cancelNow: true)),
    .init(.cancelling, .started, .cancelling, .done),
    .init(.cancelling, .finishedWell, .finished, .finish(endsIt)),
    .init(.cancelling, .finishedFailing, .finished, .finish(endsIt)),

    .init(.finished, .submit, .finished, .action(.none)),
    .init(.finished, .cancel, .finished, .action(.none)),
    .init(.finished, .registered, .finished, .registered(cancelNow: false)),
    .init(.finished, .started, .finished, .done),
    .init(.finished, .finishedWell, .finished, .finish(endedBefore)),
    .init(.finished, .finishedFailing, .finished, .finish(endedBefore)),
]

private func stageFixture(_ stage: ESM.Stage) -> ESM {
    var response = ESMResponse(state: .streaming, floor: 8, cap: 32, chunkLimit: 4, unread: bytes(2))
    response.grow(by: 8)
    let request = ESMRequest(state: .producing, high: 8, length: nil, replayable: true, unsent: bytes(2))
    return ESM(stage: stage, waiter: .waiting, response: response, request: request)
}

private func apply(_ event: StageEvent, to machine: inout ESM) -> StageResult {
    switch event {
    case .submit: return .action(machine.submit())
    case .cancel: return .action(machine.cancel())
    case .registered: return .registered(cancelNow: machine.registered())
    case .started:
        machine.started()
        return .done
    case .finishedWell: return .finish(machine.finish(.streamed))
    case .finishedFailing: return .finish(machine.finish(.failure(bodyError)))
    }
}

// MARK: - The waiter table

private enum WaiterEvent: CaseIterable, Hashable, Sendable {
    /// waiterSuspends()
    case suspends
    /// delivered(), the response holding 4 bytes: below three quarters of the mark of 8 (and half the cap
    /// of 32)
    case bytesDeliveredBelowHalfTheCap
    /// delivered(), the response holding 16 bytes: past three quarters of the mark of 8, and half the cap
    case bytesDeliveredToHalfTheCap
    /// scheduleWake()
    case wakeScheduled
    /// takeWaiter()
    case wakeTaken
    /// readerLooks()
    case readerLooks
    /// room(for: 7), the response holding 2 bytes: the delivery does not fit the mark of 8
    case deliveryOverflows
}

private enum WaiterResult: Equatable, Sendable {
    case done
    case wake(ESM.Wake)
    case answered(Bool)
    case room(ESM.Room)
}

private struct WaiterRow: Sendable {
    let state: ESM.Waiter
    let event: WaiterEvent
    let next: ESM.Waiter
    let result: WaiterResult

    init(_ state: ESM.Waiter, _ event: WaiterEvent, _ next: ESM.Waiter, _ result: WaiterResult) {
        self.state = state
        self.event = event
        self.next = next
        self.result = result
    }
}

/// Fixture of every row: a running machine with the row's waiter and a streaming response (floor 8, cap 32,
/// chunk limit 4) holding what the event says (nothing for the events that do not name a count); no body.
private let waiterRows: [WaiterRow] = [
    .init(.running, .suspends, .waiting, .done),
    .init(.running, .bytesDeliveredBelowHalfTheCap, .running, .wake(.none)),
    .init(.running, .bytesDeliveredToHalfTheCap, .running, .wake(.none)),
    .init(.running, .wakeScheduled, .running, .answered(false)),
    .init(.running, .wakeTaken, .running, .answered(false)),
    .init(.running, .readerLooks, .running, .done),
    // A running reader that lets the buffer fill is slow (or has stopped): curl pauses, the mark stays.
    .init(.running, .deliveryOverflows, .running, .room(.pause)),

    .init(.waiting, .suspends, .waiting, .done),
    // Half the mark no longer wakes at once: the mark grows for the waiting reader first.
    .init(.waiting, .bytesDeliveredBelowHalfTheCap, .wakeScheduled, .wake(.endOfPass)),
    .init(.waiting, .bytesDeliveredToHalfTheCap, .wakeScheduled, .wake(.now)),
    .init(.waiting, .wakeScheduled, .wakeScheduled, .answered(true)),
    .init(.waiting, .wakeTaken, .woken, .answered(true)),
    // (Not reached in use: a suspended reader does not look before it is resumed.)
    .init(.waiting, .readerLooks, .running, .done),
    // A reader waiting for bytes is late, not slow: the mark grows (by the floor) instead of curl pausing.
    .init(.waiting, .deliveryOverflows, .waiting, .room(.grow(8))),

    // A waiter whose wake-up is on its way does not suspend again before it has run (takeWaiter first); the
    // machine records the suspension as it comes, and the wake-up still finds it waiting.
    .init(.wakeScheduled, .suspends, .waiting, .done),
    .init(.wakeScheduled, .bytesDeliveredBelowHalfTheCap, .wakeScheduled, .wake(.none)),
    .init(.wakeScheduled, .bytesDeliveredToHalfTheCap, .wakeScheduled, .wake(.now)),
    .init(.wakeScheduled, .wakeScheduled, .wakeScheduled, .answered(false)),
    .init(.wakeScheduled, .wakeTaken, .woken, .answered(true)),
    // (Not reached in use: a suspended reader does not look before it is resumed.)
    .init(.wakeScheduled, .readerLooks, .running, .done),
    .init(.wakeScheduled, .deliveryOverflows, .wakeScheduled, .room(.grow(8))),

    // Resumed, its task has not run: it suspends again only after looking (readerLooks first), as above.
    .init(.woken, .suspends, .waiting, .done),
    .init(.woken, .bytesDeliveredBelowHalfTheCap, .woken, .wake(.none)),
    // Already resumed: nothing to wake, however much is held.
    .init(.woken, .bytesDeliveredToHalfTheCap, .woken, .wake(.none)),
    .init(.woken, .wakeScheduled, .woken, .answered(false)),
    .init(.woken, .wakeTaken, .woken, .answered(false)),
    .init(.woken, .readerLooks, .running, .done),
    // Woken but not yet run is still late: the mark grows.
    .init(.woken, .deliveryOverflows, .woken, .room(.grow(8))),
]

private func waiterFixture(_ waiter: ESM.Waiter, for event: WaiterEvent) -> ESM {
    let unread: Int
    switch event {
    case .bytesDeliveredBelowHalfTheCap: unread = 4
    case .bytesDeliveredToHalfTheCap: unread = 16
    case .deliveryOverflows: unread = 2
    case .suspends, .wakeScheduled, .wakeTaken, .readerLooks: unread = 0
    }
    let response = ESMResponse(state: .streaming, floor: 8, cap: 32, chunkLimit: 4, unread: bytes(unread))
    return ESM(stage: .running, waiter: waiter, response: response, request: .fixed(.none))
}

private func apply(_ event: WaiterEvent, to machine: inout ESM) -> WaiterResult {
    switch event {
    case .suspends:
        machine.waiterSuspends()
        return .done
    case .bytesDeliveredBelowHalfTheCap, .bytesDeliveredToHalfTheCap: return .wake(machine.delivered())
    case .wakeScheduled: return .answered(machine.scheduleWake())
    case .wakeTaken: return .answered(machine.takeWaiter())
    case .readerLooks:
        machine.readerLooks()
        return .done
    case .deliveryOverflows: return .room(machine.room(for: 7))
    }
}

// MARK: - The response side's table

private enum ResponseEvent: CaseIterable, Hashable, Sendable {
    /// deliver(head:)
    case head
    /// room(for: 2, readerIsLate: false): the loop's first look
    case deliveryFitsReaderRunning
    /// room(for: 7, readerIsLate: false)
    case deliveryOverflowsReaderRunning
    /// room(for: 7, readerIsLate: true)
    case deliveryOverflowsReaderLate
    /// grow(by: 8): the session's budget granted the growth
    case growGranted
    /// grow(by: 0): the budget had nothing left
    case growRefused
    /// hasRoom(for: 2): the loop's second look, after a growth
    case secondLookFits
    /// hasRoom(for: 7)
    case secondLookOverflows
    /// append([9]): one byte (the rows' 2 unread become 3, below half the mark of 8)
    case bytesAppended
    /// append([9, 9]): two bytes (the rows' 2 unread become 4, half the mark of 8)
    case bytesAppendedToHalf
    /// end(.complete)
    case bodyEndedComplete
    /// end(.failed(connectionReset))
    case bodyEndedFailed
    /// loopResumed()
    case loopResumed
    /// poll(), the side holding the row's unread bytes
    case readerPollsWithBytes
    /// poll(), the side holding nothing
    case readerPollsEmpty
    /// release(): the reader is gone
    case readerReleases
}

private enum ResponseResult: Equatable, Sendable {
    case answered(Bool)
    case room(ESM.Room)
    case done
    case polled(Polled)
}

private struct ResponseRow: Sendable {
    let state: ESMResponse.State
    /// Bytes held unread before the event (one chunk: 1, 2, 3, …).
    let unread: Int
    let event: ResponseEvent
    let next: ESMResponse.State
    /// Bytes held unread after it.
    let held: Int
    /// The high mark after it (the growth above the floor of 8 is what the side drew from the budget).
    let high: Int
    /// The body's end after it.
    let end: End?
    let result: ResponseResult

    init(
        _ state: ESMResponse.State, unread: Int, _ event: ResponseEvent, _ next: ESMResponse.State, held: Int,
        high: Int = 8, end: End? = nil, _ result: ResponseResult
    ) {
        self.state = state
        self.unread = unread
        self.event = event
        self.next = next
        self.held = held
        self.high = high
        self.end = end
        self.result = result
    }
}

private let failed = End.failed(.connectionReset)

/// Fixture of every row: `ResponseSide(state:floor: 8, cap: 32, chunkLimit: 4, unread:end:)` with the row's
/// state and unread bytes; a side in `.ended` has its end (`.complete`), every other none. A collected
/// response, one before its head and a released one never hold bytes: their "with bytes" rows hold none.
/// The sides that take bytes hold 2 (a paused one 6) unless the event needs none. A growth is always
/// min(mark, cap − mark) = 8 here. The loop asks for a growth only after `.grow`, the second look only after
/// a growth: the other states' rows record what the side does anyway.
private let responseRows: [ResponseRow] = [
    .init(.collecting, unread: 0, .head, .collecting, held: 0, .answered(false)),
    .init(.collecting, unread: 0, .deliveryFitsReaderRunning, .collecting, held: 0, .room(.fits)),
    .init(.collecting, unread: 0, .deliveryOverflowsReaderRunning, .collecting, held: 0, .room(.fits)),
    .init(.collecting, unread: 0, .deliveryOverflowsReaderLate, .collecting, held: 0, .room(.fits)),
    .init(.collecting, unread: 0, .growGranted, .collecting, held: 0, high: 16, .done),
    .init(.collecting, unread: 0, .growRefused, .collecting, held: 0, .done),
    .init(.collecting, unread: 0, .secondLookFits, .collecting, held: 0, .answered(true)),
    .init(.collecting, unread: 0, .secondLookOverflows, .collecting, held: 0, .answered(true)),
    .init(.collecting, unread: 0, .bytesAppended, .collecting, held: 0, .answered(false)),
    .init(.collecting, unread: 0, .bytesAppendedToHalf, .collecting, held: 0, .answered(false)),
    .init(.collecting, unread: 0, .bodyEndedComplete, .collecting, held: 0, .answered(false)),
    .init(.collecting, unread: 0, .bodyEndedFailed, .collecting, held: 0, .answered(false)),
    .init(.collecting, unread: 0, .loopResumed, .collecting, held: 0, .done),
    .init(.collecting, unread: 0, .readerPollsWithBytes, .collecting, held: 0, .polled(.pending)),
    .init(.collecting, unread: 0, .readerPollsEmpty, .collecting, held: 0, .polled(.pending)),
    .init(.collecting, unread: 0, .readerReleases, .collecting, held: 0, .answered(false)),

    .init(.awaitingHead, unread: 0, .head, .headDelivered, held: 0, .answered(true)),
    .init(.awaitingHead, unread: 0, .deliveryFitsReaderRunning, .awaitingHead, held: 0, .room(.fits)),
    .init(.awaitingHead, unread: 0, .deliveryOverflowsReaderRunning, .awaitingHead, held: 0, .room(.fits)),
    .init(.awaitingHead, unread: 0, .deliveryOverflowsReaderLate, .awaitingHead, held: 0, .room(.fits)),
    .init(.awaitingHead, unread: 0, .growGranted, .awaitingHead, held: 0, high: 16, .done),
    .init(.awaitingHead, unread: 0, .growRefused, .awaitingHead, held: 0, .done),
    .init(.awaitingHead, unread: 0, .secondLookFits, .awaitingHead, held: 0, .answered(true)),
    .init(.awaitingHead, unread: 0, .secondLookOverflows, .awaitingHead, held: 0, .answered(true)),
    .init(.awaitingHead, unread: 0, .bytesAppended, .awaitingHead, held: 0, .answered(false)),
    .init(.awaitingHead, unread: 0, .bytesAppendedToHalf, .awaitingHead, held: 0, .answered(false)),
    .init(.awaitingHead, unread: 0, .bodyEndedComplete, .ended, held: 0, end: .complete, .answered(true)),
    .init(.awaitingHead, unread: 0, .bodyEndedFailed, .ended, held: 0, end: failed, .answered(true)),
    .init(.awaitingHead, unread: 0, .loopResumed, .awaitingHead, held: 0, .done),
    .init(.awaitingHead, unread: 0, .readerPollsWithBytes, .awaitingHead, held: 0, .polled(.pending)),
    .init(.awaitingHead, unread: 0, .readerPollsEmpty, .awaitingHead, held: 0, .polled(.pending)),
    .init(.awaitingHead, unread: 0, .readerReleases, .released, held: 0, .answered(false)),

    // The head arrived, the reader has not asked for a body byte yet: a full buffer pauses, late or not (a
    // reader that never reads never grows the mark).
    .init(.headDelivered, unread: 2, .head, .headDelivered, held: 2, .answered(false)),
    .init(.headDelivered, unread: 2, .deliveryFitsReaderRunning, .headDelivered, held: 2, .room(.fits)),
    .init(.headDelivered, unread: 2, .deliveryOverflowsReaderRunning, .paused, held: 2, .room(.pause)),
    .init(.headDelivered, unread: 2, .deliveryOverflowsReaderLate, .paused, held: 2, .room(.pause)),
    .init(.headDelivered, unread: 2, .growGranted, .headDelivered, held: 2, high: 16, .done),
    .init(.headDelivered, unread: 2, .growRefused, .headDelivered, held: 2, .done),
    .init(.headDelivered, unread: 2, .secondLookFits, .headDelivered, held: 2, .answered(true)),
    .init(.headDelivered, unread: 2, .secondLookOverflows, .paused, held: 2, .answered(false)),
    .init(.headDelivered, unread: 2, .bytesAppended, .headDelivered, held: 3, .answered(true)),
    // Half the mark held, but nobody reads yet: nothing to be behind in.
    .init(.headDelivered, unread: 2, .bytesAppendedToHalf, .headDelivered, held: 4, .answered(true)),
    .init(.headDelivered, unread: 2, .bodyEndedComplete, .ended, held: 2, end: .complete, .answered(true)),
    .init(.headDelivered, unread: 2, .bodyEndedFailed, .ended, held: 2, end: failed, .answered(true)),
    .init(.headDelivered, unread: 2, .loopResumed, .headDelivered, held: 2, .done),
    // The reader's first poll: it streams from here on.
    .init(.headDelivered, unread: 2, .readerPollsWithBytes, .streaming, held: 0, .polled(.chunk([1, 2], resumeLoop: false))),
    .init(.headDelivered, unread: 0, .readerPollsEmpty, .streaming, held: 0, .polled(.pending)),
    .init(.headDelivered, unread: 2, .readerReleases, .released, held: 0, .answered(false)),

    .init(.streaming, unread: 2, .head, .streaming, held: 2, .answered(false)),
    .init(.streaming, unread: 2, .deliveryFitsReaderRunning, .streaming, held: 2, .room(.fits)),
    // Nothing is known of a running reader's pace: curl pauses.
    .init(.streaming, unread: 2, .deliveryOverflowsReaderRunning, .paused, held: 2, .room(.pause)),
    .init(.streaming, unread: 2, .deliveryOverflowsReaderLate, .streaming, held: 2, .room(.grow(8))),
    .init(.streaming, unread: 2, .growGranted, .streaming, held: 2, high: 16, .done),
    .init(.streaming, unread: 2, .growRefused, .streaming, held: 2, .done),
    .init(.streaming, unread: 2, .secondLookFits, .streaming, held: 2, .answered(true)),
    .init(.streaming, unread: 2, .secondLookOverflows, .paused, held: 2, .answered(false)),
    .init(.streaming, unread: 2, .bytesAppended, .streaming, held: 3, .answered(true)),
    // Half the mark held: the reader is behind.
    .init(.streaming, unread: 2, .bytesAppendedToHalf, .behind, held: 4, .answered(true)),
    .init(.streaming, unread: 2, .bodyEndedComplete, .ended, held: 2, end: .complete, .answered(true)),
    .init(.streaming, unread: 2, .bodyEndedFailed, .ended, held: 2, end: failed, .answered(true)),
    .init(.streaming, unread: 2, .loopResumed, .streaming, held: 2, .done),
    .init(.streaming, unread: 2, .readerPollsWithBytes, .streaming, held: 0, .polled(.chunk([1, 2], resumeLoop: false))),
    // Found empty without ever having let half the mark wait: no evidence of keeping up.
    .init(.streaming, unread: 0, .readerPollsEmpty, .streaming, held: 0, .polled(.pending)),
    .init(.streaming, unread: 2, .readerReleases, .released, held: 0, .answered(false)),

    .init(.behind, unread: 2, .head, .behind, held: 2, .answered(false)),
    .init(.behind, unread: 2, .deliveryFitsReaderRunning, .behind, held: 2, .room(.fits)),
    .init(.behind, unread: 2, .deliveryOverflowsReaderRunning, .paused, held: 2, .room(.pause)),
    .init(.behind, unread: 2, .deliveryOverflowsReaderLate, .behind, held: 2, .room(.grow(8))),
    .init(.behind, unread: 2, .growGranted, .behind, held: 2, high: 16, .done),
    .init(.behind, unread: 2, .growRefused, .behind, held: 2, .done),
    .init(.behind, unread: 2, .secondLookFits, .behind, held: 2, .answered(true)),
    .init(.behind, unread: 2, .secondLookOverflows, .paused, held: 2, .answered(false)),
    .init(.behind, unread: 2, .bytesAppended, .behind, held: 3, .answered(true)),
    .init(.behind, unread: 2, .bytesAppendedToHalf, .behind, held: 4, .answered(true)),
    .init(.behind, unread: 2, .bodyEndedComplete, .ended, held: 2, end: .complete, .answered(true)),
    .init(.behind, unread: 2, .bodyEndedFailed, .ended, held: 2, end: failed, .answered(true)),
    .init(.behind, unread: 2, .loopResumed, .behind, held: 2, .done),
    // A chunk is not the buffer found empty.
    .init(.behind, unread: 2, .readerPollsWithBytes, .behind, held: 0, .polled(.chunk([1, 2], resumeLoop: false))),
    // Found empty after it held half the mark: the reader drains faster than the bytes come.
    .init(.behind, unread: 0, .readerPollsEmpty, .keepingUp, held: 0, .polled(.pending)),
    .init(.behind, unread: 2, .readerReleases, .released, held: 0, .answered(false)),

    .init(.keepingUp, unread: 2, .head, .keepingUp, held: 2, .answered(false)),
    .init(.keepingUp, unread: 2, .deliveryFitsReaderRunning, .keepingUp, held: 2, .room(.fits)),
    // The evidence earned by draining grows the mark even for a running reader.
    .init(.keepingUp, unread: 2, .deliveryOverflowsReaderRunning, .keepingUp, held: 2, .room(.grow(8))),
    .init(.keepingUp, unread: 2, .deliveryOverflowsReaderLate, .keepingUp, held: 2, .room(.grow(8))),
    // A growth spends the evidence, granted or not.
    .init(.keepingUp, unread: 2, .growGranted, .behind, held: 2, high: 16, .done),
    .init(.keepingUp, unread: 2, .growRefused, .behind, held: 2, .done),
    .init(.keepingUp, unread: 2, .secondLookFits, .keepingUp, held: 2, .answered(true)),
    .init(.keepingUp, unread: 2, .secondLookOverflows, .paused, held: 2, .answered(false)),
    .init(.keepingUp, unread: 2, .bytesAppended, .keepingUp, held: 3, .answered(true)),
    .init(.keepingUp, unread: 2, .bytesAppendedToHalf, .keepingUp, held: 4, .answered(true)),
    .init(.keepingUp, unread: 2, .bodyEndedComplete, .ended, held: 2, end: .complete, .answered(true)),
    .init(.keepingUp, unread: 2, .bodyEndedFailed, .ended, held: 2, end: failed, .answered(true)),
    .init(.keepingUp, unread: 2, .loopResumed, .keepingUp, held: 2, .done),
    .init(.keepingUp, unread: 2, .readerPollsWithBytes, .keepingUp, held: 0, .polled(.chunk([1, 2], resumeLoop: false))),
    .init(.keepingUp, unread: 0, .readerPollsEmpty, .keepingUp, held: 0, .polled(.pending)),
    .init(.keepingUp, unread: 2, .readerReleases, .released, held: 0, .answered(false)),

    .init(.paused, unread: 6, .head, .paused, held: 6, .answered(false)),
    .init(.paused, unread: 6, .deliveryFitsReaderRunning, .paused, held: 6, .room(.fits)),
    .init(.paused, unread: 6, .deliveryOverflowsReaderRunning, .paused, held: 6, .room(.pause)),
    // Paused, the mark does not grow: the reader is behind (the loop's resumption makes it so).
    .init(.paused, unread: 6, .deliveryOverflowsReaderLate, .paused, held: 6, .room(.pause)),
    .init(.paused, unread: 6, .growGranted, .paused, held: 6, high: 16, .done),
    .init(.paused, unread: 6, .growRefused, .paused, held: 6, .done),
    .init(.paused, unread: 6, .secondLookFits, .paused, held: 6, .answered(true)),
    .init(.paused, unread: 6, .secondLookOverflows, .paused, held: 6, .answered(false)),
    .init(.paused, unread: 6, .bytesAppended, .paused, held: 7, .answered(true)),
    .init(.paused, unread: 6, .bytesAppendedToHalf, .paused, held: 8, .answered(true)),
    .init(.paused, unread: 6, .bodyEndedComplete, .ended, held: 6, end: .complete, .answered(true)),
    .init(.paused, unread: 6, .bodyEndedFailed, .ended, held: 6, end: failed, .answered(true)),
    // The buffer had been full: the reader is behind.
    .init(.paused, unread: 6, .loopResumed, .behind, held: 6, .done),
    // Down to the low mark (4): ask the loop to resume.
    .init(.paused, unread: 6, .readerPollsWithBytes, .resuming, held: 0, .polled(.chunk(bytes(6), resumeLoop: true))),
    // (Not reached in use: the chunk that empties a paused side moves it to resuming.)
    .init(.paused, unread: 0, .readerPollsEmpty, .paused, held: 0, .polled(.pending)),
    .init(.paused, unread: 6, .readerReleases, .released, held: 0, .answered(false)),

    .init(.resuming, unread: 2, .head, .resuming, held: 2, .answered(false)),
    .init(.resuming, unread: 2, .deliveryFitsReaderRunning, .resuming, held: 2, .room(.fits)),
    .init(.resuming, unread: 2, .deliveryOverflowsReaderRunning, .paused, held: 2, .room(.pause)),
    .init(.resuming, unread: 2, .deliveryOverflowsReaderLate, .paused, held: 2, .room(.pause)),
    .init(.resuming, unread: 2, .growGranted, .resuming, held: 2, high: 16, .done),
    .init(.resuming, unread: 2, .growRefused, .resuming, held: 2, .done),
    .init(.resuming, unread: 2, .secondLookFits, .resuming, held: 2, .answered(true)),
    .init(.resuming, unread: 2, .secondLookOverflows, .paused, held: 2, .answered(false)),
    .init(.resuming, unread: 2, .bytesAppended, .resuming, held: 3, .answered(true)),
    .init(.resuming, unread: 2, .bytesAppendedToHalf, .resuming, held: 4, .answered(true)),
    .init(.resuming, unread: 2, .bodyEndedComplete, .ended, held: 2, end: .complete, .answered(true)),
    .init(.resuming, unread: 2, .bodyEndedFailed, .ended, held: 2, end: failed, .answered(true)),
    .init(.resuming, unread: 2, .loopResumed, .behind, held: 2, .done),
    .init(.resuming, unread: 2, .readerPollsWithBytes, .resuming, held: 0, .polled(.chunk([1, 2], resumeLoop: false))),
    // Found empty before the loop resumed: the resumption makes the reader behind, so this earns nothing.
    .init(.resuming, unread: 0, .readerPollsEmpty, .resuming, held: 0, .polled(.pending)),
    .init(.resuming, unread: 2, .readerReleases, .released, held: 0, .answered(false)),

    .init(.ended, unread: 2, .head, .ended, held: 2, end: .complete, .answered(false)),
    .init(.ended, unread: 2, .deliveryFitsReaderRunning, .ended, held: 2, end: .complete, .room(.fits)),
    .init(.ended, unread: 2, .deliveryOverflowsReaderRunning, .ended, held: 2, end: .complete, .room(.fits)),
    .init(.ended, unread: 2, .deliveryOverflowsReaderLate, .ended, held: 2, end: .complete, .room(.fits)),
    .init(.ended, unread: 2, .growGranted, .ended, held: 2, high: 16, end: .complete, .done),
    .init(.ended, unread: 2, .growRefused, .ended, held: 2, end: .complete, .done),
    .init(.ended, unread: 2, .secondLookFits, .ended, held: 2, end: .complete, .answered(true)),
    .init(.ended, unread: 2, .secondLookOverflows, .ended, held: 2, end: .complete, .answered(true)),
    .init(.ended, unread: 2, .bytesAppended, .ended, held: 2, end: .complete, .answered(false)),
    .init(.ended, unread: 2, .bytesAppendedToHalf, .ended, held: 2, end: .complete, .answered(false)),
    .init(.ended, unread: 2, .bodyEndedComplete, .ended, held: 2, end: .complete, .answered(false)),
    .init(.ended, unread: 2, .bodyEndedFailed, .ended, held: 2, end: .complete, .answered(false)),  // first end wins
    .init(.ended, unread: 2, .loopResumed, .ended, held: 2, end: .complete, .done),
    .init(.ended, unread: 2, .readerPollsWithBytes, .ended, held: 0, end: .complete, .polled(.chunk([1, 2], resumeLoop: false))),
    .init(.ended, unread: 0, .readerPollsEmpty, .ended, held: 0, end: .complete, .polled(.end(.complete))),
    .init(.ended, unread: 2, .readerReleases, .released, held: 0, end: .complete, .answered(true)),

    .init(.released, unread: 0, .head, .released, held: 0, .answered(false)),
    .init(.released, unread: 0, .deliveryFitsReaderRunning, .released, held: 0, .room(.fits)),
    .init(.released, unread: 0, .deliveryOverflowsReaderRunning, .released, held: 0, .room(.fits)),
    .init(.released, unread: 0, .deliveryOverflowsReaderLate, .released, held: 0, .room(.fits)),
    .init(.released, unread: 0, .growGranted, .released, held: 0, high: 16, .done),
    .init(.released, unread: 0, .growRefused, .released, held: 0, .done),
    .init(.released, unread: 0, .secondLookFits, .released, held: 0, .answered(true)),
    .init(.released, unread: 0, .secondLookOverflows, .released, held: 0, .answered(true)),
    .init(.released, unread: 0, .bytesAppended, .released, held: 0, .answered(false)),
    .init(.released, unread: 0, .bytesAppendedToHalf, .released, held: 0, .answered(false)),
    .init(.released, unread: 0, .bodyEndedComplete, .released, held: 0, end: .complete, .answered(true)),
    .init(.released, unread: 0, .bodyEndedFailed, .released, held: 0, end: failed, .answered(true)),
    .init(.released, unread: 0, .loopResumed, .released, held: 0, .done),
    .init(.released, unread: 0, .readerPollsWithBytes, .released, held: 0, .polled(.pending)),
    .init(.released, unread: 0, .readerPollsEmpty, .released, held: 0, .polled(.pending)),
    .init(.released, unread: 0, .readerReleases, .released, held: 0, .answered(false)),
]

private func responseFixture(_ state: ESMResponse.State, unread: Int) -> ESMResponse {
    ESMResponse(
        state: state, floor: 8, cap: 32, chunkLimit: 4, unread: bytes(unread), end: state == .ended ? ESM.BodyEnd.complete : nil)
}

private func apply(_ event: ResponseEvent, to side: inout ESMResponse) -> ResponseResult {
    switch event {
    case .head: return .answered(side.deliver(head: ResponseHead(status: .ok)))
    case .deliveryFitsReaderRunning: return .room(side.room(for: 2, readerIsLate: false))
    case .deliveryOverflowsReaderRunning: return .room(side.room(for: 7, readerIsLate: false))
    case .deliveryOverflowsReaderLate: return .room(side.room(for: 7, readerIsLate: true))
    case .growGranted:
        side.grow(by: 8)
        return .done
    case .growRefused:
        side.grow(by: 0)
        return .done
    case .secondLookFits: return .answered(side.hasRoom(for: 2))
    case .secondLookOverflows: return .answered(side.hasRoom(for: 7))
    case .bytesAppended: return .answered(([9] as [UInt8]).withUnsafeBytes { side.append($0) })
    case .bytesAppendedToHalf: return .answered(([9, 9] as [UInt8]).withUnsafeBytes { side.append($0) })
    case .bodyEndedComplete: return .answered(side.end(.complete))
    case .bodyEndedFailed: return .answered(side.end(.failed(bodyError)))
    case .loopResumed:
        side.loopResumed()
        return .done
    case .readerPollsWithBytes, .readerPollsEmpty: return .polled(Polled(side.poll()))
    case .readerReleases: return .answered(side.release())
    }
}

// MARK: - The request side's table

private enum RequestEvent: CaseIterable, Hashable, Sendable {
    /// write([10, 11], generation: 0)
    case write
    /// write of 8 bytes (the whole mark), generation 0
    case writeFillingTheBuffer
    /// write of 5 bytes with a declared length of 4, generation 0
    case writePastLength
    /// producerWaitsForRoom(generation: 0)
    case producerWaitsForRoom
    /// curl's read callback: read(into:capacity: 3)
    case readerTakes
    /// finish(generation: 0)
    case producerFinishes
    /// fail(generation: 0, requestBodyFailed)
    case producerFails
    /// producerWaitsForReplay(after: 0)
    case producerWaitsForReplay
    /// loopResumed()
    case loopResumed
    /// rewind() of a replayable stream after curl took its first byte
    case rewind
    /// rewind() of a one-shot stream after curl took its first byte
    case rewindOneShot
    /// close()
    case close
}

private enum RequestResult: Equatable, Sendable {
    case wrote(resumeLoop: Bool, mustWait: Bool, error: TransportError.Code?)
    case answered(Bool)
    case read(ESM.Read, bytes: [UInt8], resumeProducer: Bool)
    case rewound(Bool, resumeProducer: Bool)
    case done
}

private struct RequestRow: Sendable {
    let state: ESMRequest.State
    /// Bytes the producer wrote before the event (one chunk: 1, 2, 3, …).
    let unsent: Int
    let event: RequestEvent
    let next: ESMRequest.State
    /// Bytes held unsent after the event.
    let held: Int
    let generation: Int
    let result: RequestResult

    init(
        _ state: ESMRequest.State, unsent: Int, _ event: RequestEvent, _ next: ESMRequest.State, held: Int,
        generation: Int = 0, _ result: RequestResult
    ) {
        self.state = state
        self.unsent = unsent
        self.event = event
        self.next = next
        self.held = held
        self.generation = generation
        self.result = result
    }
}

private let wroteNothingWrong = RequestResult.wrote(resumeLoop: false, mustWait: false, error: nil)
private func refused(_ code: TransportError.Code, resumeLoop: Bool = false) -> RequestResult {
    .wrote(resumeLoop: resumeLoop, mustWait: false, error: code)
}

/// Fixture of every row: `RequestSide(state:high: 8, length: nil, replayable: true, unsent:)` with the row's
/// state and unsent bytes, except: `.writePastLength` declares a length of 4, `.rewindOneShot` is not
/// replayable; a `.failed` side is a producing one (holding `unsent`) whose producer then failed
/// (requestBodyFailed), a `.closed` side a producing one then closed; for the two rewinds curl first takes
/// one byte (read with capacity 1), before the failure or the close. Bodies without a producer (none, memory,
/// file) never meet the producer's events in use: their rows record what the machine does anyway.
private let requestRows: [RequestRow] = [
    .init(.none, unsent: 0, .write, .none, held: 2, wroteNothingWrong),
    .init(.none, unsent: 0, .writeFillingTheBuffer, .none, held: 8, .wrote(resumeLoop: false, mustWait: true, error: nil)),
    .init(.none, unsent: 0, .writePastLength, .none, held: 0, refused(.bodyLengthMismatch)),
    .init(.none, unsent: 0, .producerWaitsForRoom, .none, held: 0, .answered(false)),
    .init(.none, unsent: 0, .readerTakes, .none, held: 0, .read(.end, bytes: [], resumeProducer: false)),
    .init(.none, unsent: 0, .producerFinishes, .none, held: 0, .answered(false)),
    .init(.none, unsent: 0, .producerFails, .none, held: 0, .answered(false)),
    .init(.none, unsent: 0, .producerWaitsForReplay, .none, held: 0, .answered(true)),
    .init(.none, unsent: 0, .loopResumed, .none, held: 0, .done),
    .init(.none, unsent: 0, .rewind, .none, held: 0, .rewound(true, resumeProducer: false)),
    .init(.none, unsent: 0, .rewindOneShot, .none, held: 0, .rewound(true, resumeProducer: false)),
    .init(.none, unsent: 0, .close, .none, held: 0, .answered(false)),

    .init(.memory, unsent: 0, .write, .memory, held: 2, wroteNothingWrong),
    .init(.memory, unsent: 0, .writeFillingTheBuffer, .memory, held: 8, .wrote(resumeLoop: false, mustWait: true, error: nil)),
    .init(.memory, unsent: 0, .writePastLength, .memory, held: 0, refused(.bodyLengthMismatch)),
    .init(.memory, unsent: 0, .producerWaitsForRoom, .memory, held: 0, .answered(false)),
    .init(.memory, unsent: 0, .readerTakes, .memory, held: 0, .read(.end, bytes: [], resumeProducer: false)),
    .init(.memory, unsent: 0, .producerFinishes, .memory, held: 0, .answered(false)),
    .init(.memory, unsent: 0, .producerFails, .memory, held: 0, .answered(false)),
    .init(.memory, unsent: 0, .producerWaitsForReplay, .memory, held: 0, .answered(true)),
    .init(.memory, unsent: 0, .loopResumed, .memory, held: 0, .done),
    .init(.memory, unsent: 0, .rewind, .memory, held: 0, .rewound(true, resumeProducer: false)),
    .init(.memory, unsent: 0, .rewindOneShot, .memory, held: 0, .rewound(true, resumeProducer: false)),
    .init(.memory, unsent: 0, .close, .memory, held: 0, .answered(false)),

    .init(.file, unsent: 0, .write, .file, held: 2, wroteNothingWrong),
    .init(.file, unsent: 0, .writeFillingTheBuffer, .file, held: 8, .wrote(resumeLoop: false, mustWait: true, error: nil)),
    .init(.file, unsent: 0, .writePastLength, .file, held: 0, refused(.bodyLengthMismatch)),
    .init(.file, unsent: 0, .producerWaitsForRoom, .file, held: 0, .answered(false)),
    .init(.file, unsent: 0, .readerTakes, .file, held: 0, .read(.end, bytes: [], resumeProducer: false)),
    .init(.file, unsent: 0, .producerFinishes, .file, held: 0, .answered(false)),
    .init(.file, unsent: 0, .producerFails, .file, held: 0, .answered(false)),
    .init(.file, unsent: 0, .producerWaitsForReplay, .file, held: 0, .answered(true)),
    .init(.file, unsent: 0, .loopResumed, .file, held: 0, .done),
    .init(.file, unsent: 0, .rewind, .file, held: 0, .rewound(true, resumeProducer: false)),
    .init(.file, unsent: 0, .rewindOneShot, .file, held: 0, .rewound(true, resumeProducer: false)),
    .init(.file, unsent: 0, .close, .file, held: 0, .answered(false)),

    .init(.producing, unsent: 2, .write, .producing, held: 4, wroteNothingWrong),
    .init(.producing, unsent: 2, .writeFillingTheBuffer, .producing, held: 10, .wrote(resumeLoop: false, mustWait: true, error: nil)),
    .init(.producing, unsent: 2, .writePastLength, .failed, held: 2, refused(.bodyLengthMismatch)),
    .init(.producing, unsent: 6, .producerWaitsForRoom, .full, held: 6, .answered(true)),
    .init(.producing, unsent: 4, .readerTakes, .producing, held: 1, .read(.bytes(3), bytes: [1, 2, 3], resumeProducer: false)),
    .init(.producing, unsent: 2, .producerFinishes, .finished, held: 2, .answered(false)),
    .init(.producing, unsent: 2, .producerFails, .failed, held: 2, .answered(false)),
    .init(.producing, unsent: 2, .producerWaitsForReplay, .producing, held: 2, .answered(true)),
    .init(.producing, unsent: 2, .loopResumed, .producing, held: 2, .done),
    .init(.producing, unsent: 2, .rewind, .producing, held: 0, generation: 1, .rewound(true, resumeProducer: true)),
    .init(.producing, unsent: 2, .rewindOneShot, .producing, held: 1, .rewound(false, resumeProducer: false)),
    .init(.producing, unsent: 2, .close, .closed, held: 0, .answered(true)),

    .init(.full, unsent: 6, .write, .full, held: 8, .wrote(resumeLoop: false, mustWait: true, error: nil)),
    .init(.full, unsent: 6, .writeFillingTheBuffer, .full, held: 14, .wrote(resumeLoop: false, mustWait: true, error: nil)),
    .init(.full, unsent: 4, .writePastLength, .failed, held: 4, refused(.bodyLengthMismatch)),
    .init(.full, unsent: 6, .producerWaitsForRoom, .full, held: 6, .answered(true)),
    // Below the low mark (4): the waiting producer is resumed to refill while curl sends.
    .init(.full, unsent: 6, .readerTakes, .producing, held: 3, .read(.bytes(3), bytes: [1, 2, 3], resumeProducer: true)),
    .init(.full, unsent: 6, .producerFinishes, .finished, held: 6, .answered(false)),
    .init(.full, unsent: 6, .producerFails, .failed, held: 6, .answered(false)),
    .init(.full, unsent: 6, .producerWaitsForReplay, .full, held: 6, .answered(true)),
    .init(.full, unsent: 6, .loopResumed, .full, held: 6, .done),
    .init(.full, unsent: 6, .rewind, .producing, held: 0, generation: 1, .rewound(true, resumeProducer: true)),
    .init(.full, unsent: 6, .rewindOneShot, .full, held: 5, .rewound(false, resumeProducer: false)),
    .init(.full, unsent: 6, .close, .closed, held: 0, .answered(true)),

    .init(.starved, unsent: 0, .write, .resuming, held: 2, .wrote(resumeLoop: true, mustWait: false, error: nil)),
    .init(.starved, unsent: 0, .writeFillingTheBuffer, .resuming, held: 8, .wrote(resumeLoop: true, mustWait: true, error: nil)),
    .init(.starved, unsent: 0, .writePastLength, .failed, held: 0, refused(.bodyLengthMismatch, resumeLoop: true)),
    .init(.starved, unsent: 0, .producerWaitsForRoom, .starved, held: 0, .answered(false)),
    .init(.starved, unsent: 0, .readerTakes, .starved, held: 0, .read(.wait, bytes: [], resumeProducer: false)),
    .init(.starved, unsent: 0, .producerFinishes, .finished, held: 0, .answered(true)),
    .init(.starved, unsent: 0, .producerFails, .failed, held: 0, .answered(true)),
    .init(.starved, unsent: 0, .producerWaitsForReplay, .starved, held: 0, .answered(true)),
    .init(.starved, unsent: 0, .loopResumed, .producing, held: 0, .done),
    .init(.starved, unsent: 1, .rewind, .producing, held: 0, generation: 1, .rewound(true, resumeProducer: true)),
    .init(.starved, unsent: 1, .rewindOneShot, .starved, held: 0, .rewound(false, resumeProducer: false)),
    .init(.starved, unsent: 0, .close, .closed, held: 0, .answered(true)),

    .init(.resuming, unsent: 2, .write, .resuming, held: 4, wroteNothingWrong),
    .init(.resuming, unsent: 2, .writeFillingTheBuffer, .resuming, held: 10, .wrote(resumeLoop: false, mustWait: true, error: nil)),
    .init(.resuming, unsent: 2, .writePastLength, .failed, held: 2, refused(.bodyLengthMismatch)),
    .init(.resuming, unsent: 8, .producerWaitsForRoom, .full, held: 8, .answered(true)),
    .init(.resuming, unsent: 2, .readerTakes, .resuming, held: 0, .read(.bytes(2), bytes: [1, 2], resumeProducer: false)),
    .init(.resuming, unsent: 2, .producerFinishes, .finished, held: 2, .answered(false)),
    .init(.resuming, unsent: 2, .producerFails, .failed, held: 2, .answered(false)),
    .init(.resuming, unsent: 2, .producerWaitsForReplay, .resuming, held: 2, .answered(true)),
    .init(.resuming, unsent: 2, .loopResumed, .producing, held: 2, .done),
    .init(.resuming, unsent: 2, .rewind, .producing, held: 0, generation: 1, .rewound(true, resumeProducer: true)),
    .init(.resuming, unsent: 2, .rewindOneShot, .resuming, held: 1, .rewound(false, resumeProducer: false)),
    .init(.resuming, unsent: 2, .close, .closed, held: 0, .answered(true)),

    // A write after the producer returned (a writer kept past its run) is refused: nothing is added after
    // the end the producer declared by returning.
    .init(.finished, unsent: 2, .write, .finished, held: 2, refused(.invalidBody)),
    .init(.finished, unsent: 2, .writeFillingTheBuffer, .finished, held: 2, refused(.invalidBody)),
    // Nor does a late write past the length fail a body that was complete.
    .init(.finished, unsent: 4, .writePastLength, .finished, held: 4, refused(.invalidBody)),
    .init(.finished, unsent: 6, .producerWaitsForRoom, .finished, held: 6, .answered(false)),
    .init(.finished, unsent: 0, .readerTakes, .finished, held: 0, .read(.end, bytes: [], resumeProducer: false)),
    .init(.finished, unsent: 2, .producerFinishes, .finished, held: 2, .answered(false)),
    .init(.finished, unsent: 2, .producerFails, .failed, held: 2, .answered(false)),
    .init(.finished, unsent: 2, .producerWaitsForReplay, .finished, held: 2, .answered(true)),
    .init(.finished, unsent: 2, .loopResumed, .finished, held: 2, .done),
    .init(.finished, unsent: 2, .rewind, .producing, held: 0, generation: 1, .rewound(true, resumeProducer: true)),
    .init(.finished, unsent: 2, .rewindOneShot, .finished, held: 1, .rewound(false, resumeProducer: false)),
    .init(.finished, unsent: 2, .close, .closed, held: 0, .answered(true)),

    .init(.failed, unsent: 2, .write, .failed, held: 2, refused(.requestBodyFailed)),
    .init(.failed, unsent: 2, .writeFillingTheBuffer, .failed, held: 2, refused(.requestBodyFailed)),
    .init(.failed, unsent: 2, .writePastLength, .failed, held: 2, refused(.requestBodyFailed)),
    .init(.failed, unsent: 6, .producerWaitsForRoom, .failed, held: 6, .answered(false)),
    .init(.failed, unsent: 2, .readerTakes, .failed, held: 2, .read(.failed, bytes: [], resumeProducer: false)),
    .init(.failed, unsent: 2, .producerFinishes, .failed, held: 2, .answered(false)),
    .init(.failed, unsent: 2, .producerFails, .failed, held: 2, .answered(false)),
    .init(.failed, unsent: 2, .producerWaitsForReplay, .failed, held: 2, .answered(true)),
    .init(.failed, unsent: 2, .loopResumed, .failed, held: 2, .done),
    .init(.failed, unsent: 2, .rewind, .producing, held: 0, generation: 1, .rewound(true, resumeProducer: true)),
    .init(.failed, unsent: 2, .rewindOneShot, .failed, held: 1, .rewound(false, resumeProducer: false)),
    .init(.failed, unsent: 2, .close, .closed, held: 0, .answered(true)),

    .init(.closed, unsent: 0, .write, .closed, held: 0, refused(.cancelled)),
    .init(.closed, unsent: 0, .writeFillingTheBuffer, .closed, held: 0, refused(.cancelled)),
    .init(.closed, unsent: 0, .writePastLength, .closed, held: 0, refused(.cancelled)),
    .init(.closed, unsent: 0, .producerWaitsForRoom, .closed, held: 0, .answered(false)),
    .init(.closed, unsent: 0, .readerTakes, .closed, held: 0, .read(.failed, bytes: [], resumeProducer: false)),
    .init(.closed, unsent: 0, .producerFinishes, .closed, held: 0, .answered(false)),
    .init(.closed, unsent: 0, .producerFails, .closed, held: 0, .answered(false)),
    .init(.closed, unsent: 0, .producerWaitsForReplay, .closed, held: 0, .answered(false)),
    .init(.closed, unsent: 0, .loopResumed, .closed, held: 0, .done),
    .init(.closed, unsent: 2, .rewind, .closed, held: 0, .rewound(false, resumeProducer: false)),
    .init(.closed, unsent: 2, .rewindOneShot, .closed, held: 0, .rewound(false, resumeProducer: false)),
    .init(.closed, unsent: 0, .close, .closed, held: 0, .answered(false)),
]

private func requestFixture(_ state: ESMRequest.State, unsent: Int, for event: RequestEvent) -> ESMRequest {
    let length = event == .writePastLength ? 4 : nil
    let replayable = event != .rewindOneShot
    let start: ESMRequest.State = state == .failed || state == .closed ? .producing : state
    var side = ESMRequest(state: start, high: 8, length: length, replayable: replayable, unsent: bytes(unsent))
    if event == .rewind || event == .rewindOneShot { _ = take(&side, capacity: 1) }
    switch state {
    case .failed: _ = side.fail(generation: 0, producerError)
    case .closed: _ = side.close()
    case .none, .memory, .file, .producing, .full, .starved, .resuming, .finished: break
    }
    return side
}

private func wrote(_ outcome: ESM.WriteOutcome) -> RequestResult {
    .wrote(resumeLoop: outcome.resumeLoop, mustWait: outcome.mustWait, error: outcome.error?.code)
}

private func apply(_ event: RequestEvent, to side: inout ESMRequest) -> RequestResult {
    switch event {
    case .write: return wrote(side.write([10, 11], generation: 0))
    case .writeFillingTheBuffer: return wrote(side.write(bytes(8, from: 20)[...], generation: 0))
    case .writePastLength: return wrote(side.write(bytes(5, from: 30)[...], generation: 0))
    case .producerWaitsForRoom: return .answered(side.producerWaitsForRoom(generation: 0))
    case .readerTakes:
        let taken = take(&side, capacity: 3)
        return .read(taken.read, bytes: taken.bytes, resumeProducer: taken.resumeProducer)
    case .producerFinishes: return .answered(side.finish(generation: 0))
    case .producerFails: return .answered(side.fail(generation: 0, producerError))
    case .producerWaitsForReplay: return .answered(side.producerWaitsForReplay(after: 0))
    case .loopResumed:
        side.loopResumed()
        return .done
    case .rewind, .rewindOneShot:
        let rewind = side.rewind()
        return .rewound(rewind.rewound, resumeProducer: rewind.resumeProducer)
    case .close: return .answered(side.close())
    }
}

// MARK: - The scope-end table

private enum ScopeEvent: CaseIterable, Hashable, Sendable {
    /// scopeEnded(returned: true)
    case returned
    /// scopeEnded(returned: false)
    case threw
}

private struct ScopeRow: Sendable {
    let state: ESMResponse.State
    let unread: Int
    let event: ScopeEvent
    let next: ESMResponse.State
    let action: ESM.ScopeEndAction

    init(_ state: ESMResponse.State, unread: Int, _ event: ScopeEvent, _ next: ESMResponse.State, _ action: ESM.ScopeEndAction) {
        self.state = state
        self.unread = unread
        self.event = event
        self.next = next
        self.action = action
    }
}

/// Fixture of every row: a machine at stage `.running` (its waiter running) whose response is the response
/// table's fixture for the row's state and unread bytes (`.ended` has ended complete) and whose stream body's
/// producer is still producing (high 8, nothing unsent). Whatever it held, the side holds nothing after.
private let scopeRows: [ScopeRow] = [
    .init(.collecting, unread: 0, .returned, .collecting, .abort),
    .init(.collecting, unread: 0, .threw, .collecting, .abort),
    .init(.awaitingHead, unread: 0, .returned, .released, .abort),
    .init(.awaitingHead, unread: 0, .threw, .released, .abort),
    .init(.headDelivered, unread: 2, .returned, .released, .abort),
    .init(.headDelivered, unread: 2, .threw, .released, .abort),
    .init(.streaming, unread: 2, .returned, .released, .abort),
    .init(.streaming, unread: 2, .threw, .released, .abort),
    .init(.behind, unread: 4, .returned, .released, .abort),
    .init(.behind, unread: 4, .threw, .released, .abort),
    .init(.keepingUp, unread: 2, .returned, .released, .abort),
    .init(.keepingUp, unread: 2, .threw, .released, .abort),
    // A paused transfer whose consumer leaves closes its connection.
    .init(.paused, unread: 8, .returned, .released, .abort),
    .init(.paused, unread: 8, .threw, .released, .abort),
    .init(.resuming, unread: 2, .returned, .released, .abort),
    .init(.resuming, unread: 2, .threw, .released, .abort),
    // The whole response arrived: the request body is let end (the connection is then reused).
    .init(.ended, unread: 2, .returned, .released, .awaitEnd),
    .init(.ended, unread: 2, .threw, .released, .abort),
    .init(.released, unread: 0, .returned, .released, .abort),
    .init(.released, unread: 0, .threw, .released, .abort),
]

private func scopeFixture(_ state: ESMResponse.State, unread: Int) -> ESM {
    ESM(
        stage: .running, waiter: .running, response: responseFixture(state, unread: unread),
        request: .stream(high: 8, length: nil, replayable: true))
}

// MARK: - The tables' tests

@Suite struct ExchangeStateMachineTests {
    @Test func stageTable() {
        for row in stageRows {
            var machine = stageFixture(row.state)
            let result = apply(row.event, to: &machine)
            #expect(machine.stage == row.next, "stage \(row.state) × \(row.event): next stage")
            #expect(result == row.result, "stage \(row.state) × \(row.event): actions")
        }
    }

    @Test func stageTableCoversEveryStageAndEventOnce() {
        #expect(stageRows.count == 36)
        expectEveryPairOnce(stageRows.map { Pair(state: $0.state, event: $0.event) }, "stage table")
    }

    @Test func waiterTable() {
        for row in waiterRows {
            var machine = waiterFixture(row.state, for: row.event)
            let result = apply(row.event, to: &machine)
            #expect(machine.waiter == row.next, "waiter \(row.state) × \(row.event): next state")
            #expect(result == row.result, "waiter \(row.state) × \(row.event): actions")
        }
    }

    @Test func waiterTableCoversEveryWaiterAndEventOnce() {
        #expect(waiterRows.count == 28)
        expectEveryPairOnce(waiterRows.map { Pair(state: $0.state, event: $0.event) }, "waiter table")
    }

    @Test func responseSideTable() {
        for row in responseRows {
            var side = responseFixture(row.state, unread: row.unread)
            let result = apply(row.event, to: &side)
            let message = "response \(row.state) (\(row.unread) unread) × \(row.event)"
            #expect(side.state == row.next, "\(message): next state")
            #expect(side.held == row.held, "\(message): bytes held after")
            #expect(side.high == row.high, "\(message): high mark after")
            #expect(side.grown == row.high - 8, "\(message): growth drawn from the budget after")
            #expect(side.end.map(End.init) == row.end, "\(message): the body's end after")
            #expect(result == row.result, "\(message): actions")
        }
    }

    @Test func responseSideTableCoversEveryStateAndEventOnce() {
        #expect(responseRows.count == 160)
        expectEveryPairOnce(responseRows.map { Pair(state: $0.state, event: $0.event) }, "response table")
    }

    @Test func requestSideTable() {
        for row in requestRows {
            var side = requestFixture(row.state, unsent: row.unsent, for: row.event)
            let result = apply(row.event, to: &side)
            let message = "request \(row.state) (\(row.unsent) unsent) × \(row.event)"
            #expect(side.state == row.next, "\(message): next state")
            #expect(side.held == row.held, "\(message): bytes held after")
            #expect(side.generation == row.generation, "\(message): generation after")
            #expect(result == row.result, "\(message): actions")
        }
    }

    @Test func requestSideTableCoversEveryStateAndEventOnce() {
        #expect(requestRows.count == 120)
        expectEveryPairOnce(requestRows.map { Pair(state: $0.state, event: $0.event) }, "request table")
    }

    @Test func scopeEndTable() {
        for row in scopeRows {
            var machine = scopeFixture(row.state, unread: row.unread)
            let action = machine.scopeEnded(returned: row.event == .returned)
            let message = "scope end with response \(row.state) (\(row.unread) unread) × \(row.event)"
            #expect(action == row.action, "\(message): action")
            #expect(machine.response.state == row.next, "\(message): response state after")
            #expect(machine.response.held == 0, "\(message): bytes held after")
            #expect(machine.stage == .running, "\(message): the stage is the loop's to change")
        }
    }

    @Test func scopeEndTableCoversEveryResponseStateAndEndOnce() {
        #expect(scopeRows.count == 20)
        expectEveryPairOnce(scopeRows.map { Pair(state: $0.state, event: $0.event) }, "scope-end table")
    }

    // MARK: The end of the caller's scope, by name

    @Test func aPausedTransferWhoseConsumerLeavesClosesItsConnection() {
        var machine = ESM(
            stage: .running, waiter: .running,
            response: ESMResponse(state: .paused, floor: 8, cap: 32, chunkLimit: 4, unread: bytes(8)),
            request: .fixed(.none))
        let action = machine.scopeEnded(returned: true)
        #expect(action == .abort, "a paused transfer left by its consumer must be aborted, not awaited")
        #expect(machine.response.state == .released)
        #expect(machine.response.held == 0)
    }

    /// A detached body's scope closes without aborting its transfer, at any stage; one that was not
    /// detached is aborted (the loop told while it holds the transfer). A body is detached once, and
    /// only a streamed one.
    @Test func aDetachedBodyOutlivesItsScopeAndOnlyAStreamedOneDetachesOnce() {
        for stage in ESM.Stage.allCases {
            var detached = ESM(
                stage: stage, waiter: .running, response: responseFixture(.streaming, unread: 0), request: .fixed(.none))
            let first = detached.detach()
            let second = detached.detach()
            let closed = detached.scopeClosed()
            #expect(first, "stage \(stage): a streamed body detaches")
            #expect(!second, "stage \(stage): a body detaches once")
            #expect(closed == .none, "stage \(stage): a detached body's scope closes without an abort")
            #expect(detached.stage == stage, "stage \(stage): nothing changes")
            var scoped = ESM(
                stage: stage, waiter: .running, response: responseFixture(.streaming, unread: 0), request: .fixed(.none))
            let expected: ESM.StageAction = [.submitted, .queued, .running].contains(stage) ? .tellLoopToCancel : .none
            let action = scoped.scopeClosed()
            #expect(action == expected, "stage \(stage): a scoped body's transfer ends with its scope")
        }
        var collected = ESM(response: .collected, request: .fixed(.none))
        let detachedCollected = collected.detach()
        #expect(!detachedCollected, "a collected response has no body to detach")
    }

    @Test func aHandlerThatReturnedAfterTheWholeResponseLetsTheRequestBodyEnd() {
        var machine = ESM(
            stage: .running, waiter: .running,
            response: ESMResponse(state: .ended, floor: 8, cap: 32, chunkLimit: 4, end: .complete),
            request: .stream(high: 8, length: nil, replayable: true))
        let action = machine.scopeEnded(returned: true)
        #expect(action == .awaitEnd)
    }

    @Test func aHandlerThatThrewAbortsEvenAfterTheWholeResponse() {
        var machine = ESM(
            stage: .running, waiter: .running,
            response: ESMResponse(state: .ended, floor: 8, cap: 32, chunkLimit: 4, end: .complete),
            request: .stream(high: 8, length: nil, replayable: true))
        let action = machine.scopeEnded(returned: false)
        #expect(action == .abort)
    }

    @Test func aFinishedTransferNeedsNothingAtScopeEnd() {
        for returned in [true, false] {
            for state in [ESMResponse.State.behind, .keepingUp, .paused, .ended, .released] {
                var machine = ESM(
                    stage: .finished, waiter: .running,
                    response: ESMResponse(
                        state: state, floor: 8, cap: 32, chunkLimit: 4, unread: bytes(2),
                        end: state == .ended ? ESM.BodyEnd.complete : nil),
                    request: .fixed(.none))
                let action = machine.scopeEnded(returned: returned)
                #expect(action == ESM.ScopeEndAction.none, "finished, response \(state), returned \(returned)")
                #expect(machine.response.held == 0, "finished, response \(state): what was held is dropped")
            }
        }
    }

    @Test func aFailedBodyOrAFailedResponseAbortsAHandlerThatReturned() {
        var failedBody = ESMRequest.stream(high: 8, length: nil, replayable: true)
        _ = failedBody.fail(generation: 0, producerError)
        var machine = ESM(
            stage: .running, waiter: .running,
            response: ESMResponse(state: .ended, floor: 8, cap: 32, chunkLimit: 4, end: .complete), request: failedBody)
        let afterFailedBody = machine.scopeEnded(returned: true)
        #expect(afterFailedBody == .abort)

        var failedResponse = ESM(
            stage: .running, waiter: .running,
            response: ESMResponse(state: .ended, floor: 8, cap: 32, chunkLimit: 4, end: .failed(bodyError)),
            request: .stream(high: 8, length: nil, replayable: true))
        let afterFailedResponse = failedResponse.scopeEnded(returned: true)
        #expect(afterFailedResponse == .abort)
    }

    // MARK: Beyond one event

    @Test func finishingEndsBothSidesAndHandsTheOutcomeOutOnce() {
        var machine = stageFixture(.running)
        let action = machine.finish(.failure(bodyError))
        #expect(action == endsIt)
        #expect(machine.isFinished)
        #expect(machine.waiter == .woken, "resumed; it has not looked yet")
        #expect(machine.response.state == .ended)
        #expect(machine.response.end.map(End.init) == failed)
        #expect(machine.request.state == .closed)
        let growthLeft = machine.response.takeGrowth()
        #expect(growthLeft == 0, "the growth went back with the finish action")
        let outcome = machine.takeOutcome()
        if case .failure(let error)? = outcome {
            #expect(error.code == .connectionReset)
        } else {
            Issue.record("the outcome should be the failure, got \(String(describing: outcome))")
        }
        let handedOutAgain = machine.takeOutcome() != nil
        #expect(!handedOutAgain, "the outcome is handed out once")
    }

    @Test func aFailureEndsTheResponseAfterItsUnreadBytes() {
        var machine = stageFixture(.running)
        machine.finish(.failure(bodyError))
        let first = Polled(machine.response.poll())
        let second = Polled(machine.response.poll())
        #expect(first == .chunk([1, 2], resumeLoop: false))
        #expect(second == .end(failed))
    }

    @Test func aCancellationBeforeSubmissionFailsTheSubmissionAndRegistrationCancelsAtOnce() {
        var machine = ESM(response: .collected, request: .fixed(.none))
        let cancel = machine.cancel()
        let submit = machine.submit()
        let registered = machine.registered()
        #expect(cancel == .none)
        #expect(submit == .failCancelled)
        #expect(registered)
        #expect(machine.isCancelled)
    }

    @Test func aRewindBeforeCurlTookAnythingChangesNothing() {
        for state in ESMRequest.State.allCases {
            var side = ESMRequest(state: state, high: 8, length: nil, replayable: false, unsent: bytes(2))
            let rewind = side.rewind()
            #expect(rewind.rewound, "\(state): rewound")
            #expect(!rewind.resumeProducer, "\(state): no new run")
            #expect(side.state == state, "\(state): state kept")
            #expect(side.held == 2, "\(state): bytes kept")
            #expect(side.generation == 0, "\(state): generation kept")
        }
    }

    @Test func aDeclaredLengthKeepsItsLastByteUntilTheProducerReturns() {
        var side = ESMRequest(state: .producing, high: 8, length: 4, replayable: true, unsent: bytes(4))
        let first = take(&side, capacity: 8)
        #expect(first.read == .bytes(3))
        #expect(first.bytes == [1, 2, 3])
        let held = take(&side, capacity: 8)
        #expect(held.read == .wait)
        #expect(side.state == .starved)
        let resume = side.finish(generation: 0)
        #expect(resume, "the producer's return resumes the paused send direction")
        let last = take(&side, capacity: 8)
        #expect(last.bytes == [4])
        let end = take(&side, capacity: 8)
        #expect(end.read == .end)
    }

    @Test func aFailureKeepsTheFirstError() {
        var side = ESMRequest.stream(high: 8, length: nil, replayable: true)
        let first = side.fail(generation: 0, producerError)
        let second = side.fail(generation: 0, bodyError)
        #expect(!first && !second)
        #expect(side.failure?.code == .requestBodyFailed)
    }

    @Test func anOldGenerationsCallsAreIgnored() {
        var side = ESMRequest.stream(high: 8, length: nil, replayable: true)
        _ = side.write([1, 2], generation: 0)
        _ = take(&side, capacity: 1)
        _ = side.rewind()
        let write = side.write([3], generation: 0)
        let waits = side.producerWaitsForRoom(generation: 0)
        let finish = side.finish(generation: 0)
        let fail = side.fail(generation: 0, producerError)
        let replay = side.producerWaitsForReplay(after: 0)
        #expect(write.error?.code == .cancelled)
        #expect(!waits && !finish && !fail && !replay)
        #expect(side.state == .producing)
        #expect(side.generation == 1)
    }
}

// MARK: - The high mark's growth

/// The loop's side of a streamed response, as ``Exchange`` drives the machine: the first look
/// (`room(for:)`), a growth from the session's budget when asked for and the second look, the bytes, and the
/// wake-up (one due now is taken at once, as `Exchange.wake()` does; one at the end of the pass waits).
private struct Deliveries {
    var machine: ESM
    /// What the budget has left to grant.
    var budget = Int.max
    /// Each growth asked for.
    private(set) var asked: [Int] = []
    /// Each delivery's wake-up.
    private(set) var wakes: [ESM.Wake] = []

    init(_ response: ESMResponse, waiter: ESM.Waiter) {
        machine = ESM(stage: .running, waiter: waiter, response: response, request: .fixed(.none))
    }

    var side: ESMResponse { machine.response }

    /// Delivers `count` bytes: false (curl pauses) when they do not fit.
    mutating func deliver(_ count: Int) -> Bool {
        switch machine.room(for: count) {
        case .fits:
            break
        case .pause:
            return false
        case .grow(let growth):
            asked.append(growth)
            let granted = min(growth, budget)
            budget -= granted
            machine.response.grow(by: granted)
            guard machine.response.hasRoom(for: count) else { return false }
        }
        let appended = bytes(count).withUnsafeBytes { machine.response.append($0) }
        guard appended else { return false }
        let wake = machine.delivered()
        wakes.append(wake)
        if wake == .now { _ = machine.takeWaiter() }
        return true
    }

    /// Delivers 4-byte pieces until curl is paused; returns the bytes delivered.
    mutating func fillUntilPaused() -> Int {
        var delivered = 0
        while deliver(4) {
            delivered += 4
            if delivered > 1024 { break }  // a side that never pauses fails the caller's expectations, not hangs
        }
        return delivered
    }

    /// The reader looks and polls once.
    mutating func poll() -> Polled {
        machine.readerLooks()
        return Polled(machine.response.poll())
    }

    /// The reader polls until something other than a chunk: the bytes taken, the resumptions asked, what
    /// ended the run.
    mutating func drain() -> (taken: Int, resumes: Int, last: Polled) {
        var taken = 0
        var resumes = 0
        while true {
            let next = poll()
            guard case .chunk(let chunk, let resume) = next else { return (taken, resumes, next) }
            taken += chunk.count
            if resume { resumes += 1 }
        }
    }
}

@Suite struct ExchangeMarkGrowthTests {
    @Test func aLateReadersOverflowGrowsTheMarkToTheCapThenPauses() {
        var loop = Deliveries(ESMResponse(state: .streaming, floor: 8, cap: 32, chunkLimit: 4), waiter: .waiting)
        let delivered = loop.fillUntilPaused()
        #expect(delivered == 32)
        #expect(loop.asked == [8, 16], "8 → 16 → 32, then nothing left below the cap")
        #expect(loop.side.high == 32)
        #expect(loop.side.state == .paused, "at the cap a late reader's overflow pauses too")
        #expect(loop.side.held == 32)
        // 4: the waiting reader is woken at the end of the pass; 16 held (half the cap): at once; then it is
        // woken and has not run: late still, and nothing more to wake.
        #expect(loop.wakes == [.endOfPass, .none, .none, .now, .none, .none, .none, .none])
        #expect(loop.machine.waiter == .woken)
        let growth = loop.machine.response.takeGrowth()
        #expect(growth == 24)
    }

    @Test func growthStopsAtACapThatIsNotADoubling() {
        var loop = Deliveries(ESMResponse(state: .streaming, floor: 8, cap: 20, chunkLimit: 4), waiter: .waiting)
        let delivered = loop.fillUntilPaused()
        #expect(delivered == 20)
        #expect(loop.asked == [8, 4])
        #expect(loop.side.high == 20)
        #expect(loop.side.state == .paused)
    }

    @Test func aBudgetThatRefusesPausesCurl() {
        var loop = Deliveries(ESMResponse(state: .streaming, floor: 8, cap: 32, chunkLimit: 4), waiter: .waiting)
        loop.budget = 0
        let delivered = loop.fillUntilPaused()
        #expect(delivered == 8)
        #expect(loop.asked == [8], "asked once; refused, curl pauses")
        #expect(loop.side.high == 8)
        #expect(loop.side.state == .paused)
        let growth = loop.machine.response.takeGrowth()
        #expect(growth == 0)
    }

    @Test func aRunningReadersOverflowPauses() {
        // A reader that stops (running, never reads): curl pauses, nothing asks for more.
        var idle = Deliveries(ESMResponse(state: .streaming, floor: 8, cap: 32, chunkLimit: 4), waiter: .running)
        let delivered = idle.fillUntilPaused()
        #expect(delivered == 8)
        #expect(idle.asked == [])
        #expect(idle.side.state == .paused)
        #expect(idle.side.high == 8)
        let idleGrowth = idle.machine.response.takeGrowth()
        #expect(idleGrowth == 0)

        // A reader that takes a chunk now and then but never finds the buffer empty.
        var slow = Deliveries(ESMResponse(state: .streaming, floor: 8, cap: 32, chunkLimit: 4), waiter: .running)
        for cycle in 1...5 {
            _ = slow.fillUntilPaused()
            #expect(slow.side.state == .paused, "cycle \(cycle)")
            let next = slow.poll()
            guard case .chunk(_, resumeLoop: true) = next else {
                Issue.record("cycle \(cycle): expected a chunk that asks to resume, got \(next)")
                return
            }
            slow.machine.response.loopResumed()
            #expect(slow.side.state == .behind, "cycle \(cycle): resumed after a full buffer, the reader is behind")
        }
        #expect(slow.asked == [])
        #expect(slow.side.high == 8)
        let slowGrowth = slow.machine.response.takeGrowth()
        #expect(slowGrowth == 0)
    }

    @Test func aReaderThatNeverAsksForABodyByteNeverGrowsTheMark() {
        // Woken for the head and not yet run: late, yet it has not asked for the body.
        var loop = Deliveries(ESMResponse(state: .headDelivered, floor: 8, cap: 32, chunkLimit: 4), waiter: .woken)
        let delivered = loop.fillUntilPaused()
        #expect(delivered == 8)
        #expect(loop.asked == [])
        #expect(loop.side.high == 8)
        #expect(loop.side.state == .paused)
    }

    @Test func aReaderThatNeverLetHalfTheMarkWaitEarnsNothing() {
        var loop = Deliveries(ESMResponse(state: .streaming, floor: 8, cap: 32, chunkLimit: 4), waiter: .running)
        let empty = loop.poll()
        #expect(empty == .pending)
        #expect(loop.side.state == .streaming)
        let fits = loop.deliver(3)
        #expect(fits)
        #expect(loop.side.state == .streaming, "3 of 8 is below half the mark")
        let run = loop.drain()
        #expect(run.taken == 3)
        #expect(run.last == .pending)
        #expect(loop.side.state == .streaming, "never behind: finding it empty earns nothing")
        _ = loop.deliver(3)
        let overflow = loop.deliver(6)
        #expect(!overflow)
        #expect(loop.asked == [])
        #expect(loop.side.state == .paused)
    }

    @Test func keepingUpEarnedByDrainingAfterHalfFullGrowsEvenWhenRunning() {
        var loop = Deliveries(ESMResponse(state: .streaming, floor: 8, cap: 32, chunkLimit: 4), waiter: .running)
        let first = loop.deliver(4)
        #expect(first)
        #expect(loop.side.state == .behind, "half the mark held")
        let run = loop.drain()
        #expect(run.taken == 4)
        #expect(run.last == .pending)
        #expect(loop.side.state == .keepingUp, "found empty after being behind")

        // The running reader's overflow grows the mark once: the evidence is spent by that growth.
        let delivered = loop.fillUntilPaused()
        #expect(delivered == 16)
        #expect(loop.asked == [8])
        #expect(loop.side.high == 16)
        #expect(loop.side.state == .paused, "a second overflow without a new empty buffer pauses")

        // Drained again while paused, and found empty once the loop resumed: earned again, 16 → 32.
        let drained = loop.drain()
        #expect(drained.taken == 16)
        #expect(drained.resumes == 1, "one resumption per pause")
        #expect(loop.side.state == .resuming)
        loop.machine.response.loopResumed()
        #expect(loop.side.state == .behind)
        let again = loop.poll()
        #expect(again == .pending)
        #expect(loop.side.state == .keepingUp)
        let more = loop.fillUntilPaused()
        #expect(more == 32)
        #expect(loop.asked == [8, 16])
        #expect(loop.side.high == 32)
        let growth = loop.machine.response.takeGrowth()
        #expect(growth == 24)
    }

    @Test func aGrowthRefusedStillSpendsTheEvidence() {
        var side = ESMResponse(state: .keepingUp, floor: 8, cap: 32, chunkLimit: 4, unread: bytes(8))
        let room = side.room(for: 4, readerIsLate: false)
        #expect(room == .grow(8))
        side.grow(by: 0)
        #expect(side.state == .behind)
        let second = side.hasRoom(for: 4)
        #expect(!second)
        #expect(side.state == .paused)
        #expect(side.high == 8)
    }

    @Test func anEventStreamSideWhoseFloorIsItsCapNeverGrows() {
        // Late reader.
        var late = Deliveries(ESMResponse(state: .streaming, floor: 8, cap: 8, chunkLimit: 4), waiter: .waiting)
        let delivered = late.fillUntilPaused()
        #expect(delivered == 8)
        #expect(late.asked == [])
        #expect(late.side.high == 8)
        #expect(late.side.state == .paused)
        #expect(late.wakes == [.now, .none], "4 held is half the cap of 8: woken at once, then it has been woken")

        // A reader that kept up.
        var side = ESMResponse(state: .keepingUp, floor: 8, cap: 8, chunkLimit: 4, unread: bytes(8))
        let room = side.room(for: 4, readerIsLate: true)
        #expect(room == .pause)
        #expect(side.state == .paused)
        #expect(side.high == 8)

        // Drained after a pause: still nothing to ask.
        side.loopResumed()
        var run = Deliveries(side, waiter: .running)
        let drained = run.drain()
        #expect(drained.taken == 8)
        #expect(drained.last == .pending)
        #expect(run.side.state == .keepingUp)
        let overflow = run.machine.room(for: 9)
        #expect(overflow == .fits, "an empty buffer takes any delivery")
        let first = run.deliver(4)
        let second = run.deliver(4)
        #expect(first && second)
        let full = run.machine.room(for: 1)
        #expect(full == .pause)
        #expect(run.side.high == 8)
    }

    @Test func aBulkChunkIsTakenAsCopiedBytesAre() {
        for state in ESMResponse.State.allCases {
            var copied = responseFixture(state, unread: 2)
            var bulk = responseFixture(state, unread: 2)
            let copiedTaken = ([9, 9] as [UInt8]).withUnsafeBytes { copied.append($0) }
            let bulkTaken = bulk.append(chunk: [9, 9])
            #expect(bulkTaken == copiedTaken, "\(state): taken")
            #expect(bulk.state == copied.state, "\(state): next state")
            #expect(bulk.held == copied.held, "\(state): bytes held after")

            var empty = responseFixture(state, unread: 2)
            let emptyTaken = empty.append(chunk: [])
            #expect(!emptyTaken, "\(state): an empty chunk is not taken")
            #expect(empty.state == state, "\(state): an empty chunk changes nothing")
        }
    }

    @Test func takeGrowthGivesTheGrowthBackOnce() {
        var side = ESMResponse(state: .behind, floor: 8, cap: 32, chunkLimit: 4)
        side.grow(by: 8)
        side.grow(by: 16)
        side.grow(by: 0)
        let first = side.takeGrowth()
        let second = side.takeGrowth()
        #expect(first == 24)
        #expect(second == 0)
        #expect(side.high == 32, "the mark stays as it is")
    }

    @Test func wakesAtOnceAtHalfTheCap() {
        let halfTheMark = ESMResponse(state: .behind, floor: 8, cap: 32, chunkLimit: 4, unread: bytes(4))
        let wholeMark = ESMResponse(state: .behind, floor: 8, cap: 32, chunkLimit: 4, unread: bytes(8))
        let belowHalfTheCap = ESMResponse(state: .behind, floor: 8, cap: 32, chunkLimit: 4, unread: bytes(15))
        let halfTheCap = ESMResponse(state: .behind, floor: 8, cap: 32, chunkLimit: 4, unread: bytes(16))
        #expect(halfTheMark.isHalfFull)
        #expect(!halfTheMark.wakesAtOnce, "half the mark no longer wakes at once")
        #expect(!wholeMark.wakesAtOnce)
        #expect(!belowHalfTheCap.wakesAtOnce)
        #expect(halfTheCap.wakesAtOnce)

        // A mark that never grows: its cap is its floor.
        let eventStream = ESMResponse(state: .behind, floor: 8, cap: 8, chunkLimit: 4, unread: bytes(4))
        #expect(eventStream.wakesAtOnce)

        // A growth the budget refuses brings the cap down to the mark: half the mark wakes at once again,
        // and the mark asks for no more.
        var refused = ESMResponse(state: .keepingUp, floor: 8, cap: 32, chunkLimit: 4, unread: bytes(4))
        refused.grow(by: 0)
        #expect(refused.cap == 8)
        #expect(refused.wakesAtOnce)
        var full = ESMResponse(state: .keepingUp, floor: 8, cap: 32, chunkLimit: 4, unread: bytes(8))
        full.grow(by: 0)
        let room = full.room(for: 4, readerIsLate: true)
        #expect(room == .pause)

        // What the machine's delivered() makes of it for a waiting reader.
        var atTheMark = ESM(stage: .running, waiter: .waiting, response: wholeMark, request: .fixed(.none))
        var atHalfTheCap = ESM(stage: .running, waiter: .waiting, response: halfTheCap, request: .fixed(.none))
        let later = atTheMark.delivered()
        let now = atHalfTheCap.delivered()
        #expect(later == .endOfPass)
        #expect(now == .now)
    }
}

// MARK: - ChunkBuffer

@Suite struct ExchangeChunkBufferTests {
    @Test func marksAndFit() {
        var buffer = ChunkBuffer<[UInt8]>(high: 8)
        #expect(buffer.low == 4)
        #expect(buffer.isEmpty)
        #expect(!buffer.isFull)
        #expect(buffer.fits(100), "an empty buffer takes any delivery")
        buffer.append(bytes(6))
        #expect(buffer.fits(2))
        #expect(!buffer.fits(3))
        #expect(!buffer.isFull)
        buffer.append(bytes(2))
        #expect(buffer.isFull)
        #expect(!buffer.fits(1))
        #expect(buffer.held == 8)

        #expect(ChunkBuffer<[UInt8]>(high: 9).low == 4)
        let smallest = ChunkBuffer<[UInt8]>(high: 0)
        #expect(smallest.high == 1)
        #expect(smallest.low == 0)
    }

    @Test func appendingCopiesJoinsSmallDeliveriesUpToTheChunkLimit() {
        var buffer = ChunkBuffer<[UInt8]>(high: 64)
        for piece in [[1, 2], [3, 4], [5], [6, 7, 8, 9, 10, 11], [12]] as [[UInt8]] {
            piece.withUnsafeBytes { buffer.append(copying: $0, chunkLimit: 4) }
        }
        [UInt8]().withUnsafeBytes { buffer.append(copying: $0, chunkLimit: 4) }
        #expect(buffer.held == 12)
        var chunks: [[UInt8]] = []
        while let chunk = buffer.popFirst() { chunks.append(chunk) }
        #expect(chunks == [[1, 2, 3, 4], [5], [6, 7, 8, 9, 10, 11], [12]])
        #expect(buffer.held == 0)

        // Nothing unread: a delivery starts a chunk of its own.
        ([13] as [UInt8]).withUnsafeBytes { buffer.append(copying: $0, chunkLimit: 4) }
        let after = buffer.popFirst()
        #expect(after == [13])
    }

    @Test func copyTakesPartialChunks() {
        var buffer = ChunkBuffer<ArraySlice<UInt8>>(high: 16)
        buffer.append([1, 2, 3])
        buffer.append([4, 5])
        func copy(_ capacity: Int) -> [UInt8] {
            var target = [UInt8](repeating: 0, count: capacity)
            let count = target.withUnsafeMutableBytes { raw in
                raw.baseAddress.map { buffer.copy(into: $0, capacity: capacity) } ?? 0
            }
            return Array(target[..<count])
        }
        let first = copy(2)
        #expect(first == [1, 2])
        #expect(buffer.held == 3)
        let second = copy(2)
        #expect(second == [3, 4])
        #expect(buffer.held == 1)
        let third = copy(8)
        #expect(third == [5])
        #expect(buffer.held == 0)
        #expect(buffer.isEmpty)
        let none = copy(8)
        #expect(none == [])
    }

    @Test func popFirstKeepsArrivalOrderAcrossCompaction() {
        var buffer = ChunkBuffer<[UInt8]>(high: 1000)
        for value in 0..<40 { buffer.append([UInt8(value)]) }
        var taken: [UInt8] = []
        for _ in 0..<35 { if let chunk = buffer.popFirst() { taken += chunk } }
        for value in 40..<45 { buffer.append([UInt8(value)]) }
        #expect(buffer.held == 10)
        while let chunk = buffer.popFirst() { taken += chunk }
        #expect(taken == (0..<45).map { UInt8($0) })
        #expect(buffer.held == 0)
        #expect(buffer.isEmpty)
        let none = buffer.popFirst()
        #expect(none == nil)
    }

    @Test func removeAllDropsEverything() {
        var buffer = ChunkBuffer<[UInt8]>(high: 4)
        buffer.append([1, 2, 3])
        buffer.append([4, 5])
        buffer.removeAll()
        #expect(buffer.isEmpty)
        #expect(buffer.held == 0)
        #expect(buffer.high == 4)
        let none = buffer.popFirst()
        #expect(none == nil)
    }
}
