// Curlew — a stream body's side of the exchange between its producer and the loop's read callback, as the
// pure machine sees it.

@testable import CurlewEngine
import HTTPTypes
import Testing

typealias RequestSide = ExchangeStateMachine.RequestSide

/// What the read callback gets with a buffer of `capacity` bytes: the result and the bytes copied.
private func read(_ side: inout RequestSide, capacity: Int = 8) -> (ExchangeStateMachine.Read, [UInt8]) {
    var buffer = [UInt8](repeating: 0, count: capacity)
    let result = buffer.withUnsafeMutableBytes { bytes -> ExchangeStateMachine.Read in
        guard let base = bytes.baseAddress else { return .failed }
        return side.read(into: base, capacity: capacity).0
    }
    if case .bytes(let count) = result { return (result, Array(buffer[..<count])) }
    return (result, [])
}

@Suite struct RequestStreamTests {
    @Test func chunksAreHandedOverInOrderAcrossReadSizes() {
        var side = RequestSide.stream(high: 1024, length: nil, replayable: true)
        _ = side.write([1, 2, 3], generation: 0)
        _ = side.write([4, 5, 6, 7, 8, 9, 10], generation: 0)
        #expect(read(&side, capacity: 4).1 == [1, 2, 3, 4])
        #expect(read(&side, capacity: 4).1 == [5, 6, 7, 8])
        #expect(read(&side, capacity: 4).1 == [9, 10])
        #expect(side.taken == 10)
    }

    @Test func anEmptyStreamPausesAndTheNextWriteAsksToResumeOnce() {
        var side = RequestSide.stream(high: 1024, length: nil, replayable: true)
        #expect(read(&side).0 == .wait)
        #expect(side.state == .starved)
        let first = side.write([1], generation: 0)
        #expect(first.resumeLoop)
        #expect(side.state == .resuming)
        let second = side.write([2], generation: 0)
        #expect(!second.resumeLoop)
        side.loopResumed()
        #expect(read(&side).1 == [1, 2])
        #expect(read(&side).0 == .wait)
        let value1 = side.finish(generation: 0)
        #expect(value1)
        #expect(read(&side).0 == .end)
    }

    @Test func aWriteAtTheHighWaterMarkMustWait() {
        var side = RequestSide.stream(high: 10, length: nil, replayable: true)
        let value2 = side.write([UInt8](repeating: 1, count: 9)[...], generation: 0)
        #expect(!value2.mustWait)
        let value3 = side.write([1], generation: 0)
        #expect(value3.mustWait)
        let value4 = side.producerWaitsForRoom(generation: 0)
        #expect(value4)
        #expect(side.state == .full)
        // curl takes the held bytes below the low mark: the producer is to be resumed.
        var buffer = [UInt8](repeating: 0, count: 8)
        var resume = false
        buffer.withUnsafeMutableBytes { bytes in
            if let base = bytes.baseAddress { resume = side.read(into: base, capacity: 8).resumeProducer }
        }
        #expect(resume)
        #expect(side.state == .producing)
    }

    @Test func writingPastTheDeclaredLengthFailsAndNothingOfItIsTaken() {
        var side = RequestSide.stream(high: 1024, length: 4, replayable: true)
        let value5 = side.write([1, 2, 3], generation: 0)
        #expect(value5.error == nil)
        let value6 = side.write([4, 5], generation: 0)
        #expect(value6.error?.code == .bodyLengthMismatch)
        #expect(read(&side).0 == .failed)
        #expect(side.failure?.code == .bodyLengthMismatch)
    }

    @Test func finishingShortOfTheDeclaredLengthFails() {
        var side = RequestSide.stream(high: 1024, length: 4, replayable: true)
        _ = side.write([1, 2, 3], generation: 0)
        _ = side.finish(generation: 0)
        #expect(read(&side).0 == .failed)
        #expect(side.failure?.message == "the request body's producer wrote 3 of the 4 bytes it declared")
    }

    @Test func aReplayableStreamRewindsToANewGenerationAndTheOldWriterIsRefused() {
        var side = RequestSide.stream(high: 1024, length: nil, replayable: true)
        _ = side.write([1, 2, 3], generation: 0)
        _ = read(&side)
        let (rewound, resume) = side.rewind()

        #expect(rewound)
        #expect(resume)
        #expect(side.generation == 1)
        let value7 = side.write([9], generation: 0)
        #expect(value7.error?.code == .cancelled)
        _ = side.write([4, 5], generation: 1)
        #expect(read(&side).1 == [4, 5])
    }

    @Test func aOneShotStreamRewindsOnlyWhileNothingWasTaken() {
        var side = RequestSide.stream(high: 1024, length: nil, replayable: false)
        _ = side.write([1, 2, 3], generation: 0)
        let value8 = side.rewind()
        #expect(value8.rewound)
        #expect(side.generation == 0)
        _ = read(&side)
        let value9 = side.rewind()
        #expect(!value9.rewound)
    }

    @Test func aClosedStreamRefusesWritesAndEndsTheLoopsReads() {
        var side = RequestSide.stream(high: 1024, length: nil, replayable: true)
        _ = side.write([1], generation: 0)
        let closed = side.close()
        #expect(closed)
        let value10 = side.write([2], generation: 0)
        #expect(value10.error?.code == .cancelled)
        #expect(read(&side).0 == .failed)
        #expect(side.isClosed)
        #expect(!side.producerWaitsForReplay(after: 0))
    }

    @Test func aFinishedRunWaitsForAReplay() {
        var side = RequestSide.stream(high: 1024, length: nil, replayable: true)
        let value11 = side.finish(generation: 0)
        #expect(!value11)
        #expect(read(&side).0 == .end)
        #expect(side.producerWaitsForReplay(after: 0))
    }
}
