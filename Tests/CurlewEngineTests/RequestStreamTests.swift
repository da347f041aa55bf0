// Curlew — a stream body's hand-over between its producer and the loop's read callback, without sockets.

@testable import CurlewEngine
import HTTPTypes
import Testing

/// What the read callback gets with a buffer of `capacity` bytes: the result and the bytes copied.
private func read(_ stream: RequestStream, capacity: Int = 8) -> (RequestStream.Read, [UInt8]) {
    var buffer = [UInt8](repeating: 0, count: capacity)
    let result = buffer.withUnsafeMutableBytes { bytes -> RequestStream.Read in
        guard let base = bytes.baseAddress else { return .failed }
        let (read, writer) = stream.read(into: base, capacity: capacity)
        writer?.resume()
        return read
    }
    if case .bytes(let count) = result { return (result, Array(buffer[..<count])) }
    return (result, [])
}

@Suite struct RequestStreamTests {
    @Test func chunksAreHandedOverInOrderAcrossReadSizes() {
        let stream = RequestStream(length: nil, highWater: 1024)
        _ = stream.write([1, 2, 3], generation: 0)
        _ = stream.write([4, 5, 6, 7, 8, 9, 10], generation: 0)
        #expect(read(stream, capacity: 4).1 == [1, 2, 3, 4])
        #expect(read(stream, capacity: 4).1 == [5, 6, 7, 8])
        #expect(read(stream, capacity: 4).1 == [9, 10])
        #expect(stream.taken == 10)
    }

    @Test func anEmptyStreamPausesAndTheNextWriteAsksToResumeOnce() {
        let stream = RequestStream(length: nil, highWater: 1024)
        #expect(read(stream).0 == .wait)
        #expect(stream.write([1], generation: 0).resumeLoop)
        #expect(!stream.write([2], generation: 0).resumeLoop)
        stream.loopResumed()
        #expect(read(stream).1 == [1, 2])
        #expect(read(stream).0 == .wait)
        #expect(stream.finish(generation: 0, trailers: nil))
        #expect(read(stream).0 == .end)
    }

    @Test func aWriteAtTheHighWaterMarkMustWait() {
        let stream = RequestStream(length: nil, highWater: 10)
        #expect(!stream.write([UInt8](repeating: 1, count: 9)[...], generation: 0).mustWait)
        #expect(stream.write([1], generation: 0).mustWait)
    }

    @Test func writingPastTheDeclaredLengthFailsAndNothingOfItIsTaken() {
        let stream = RequestStream(length: 4, highWater: 1024)
        #expect(stream.write([1, 2, 3], generation: 0).error == nil)
        #expect(stream.write([4, 5], generation: 0).error?.code == .bodyLengthMismatch)
        #expect(read(stream).0 == .failed)
        #expect(stream.failure?.code == .bodyLengthMismatch)
    }

    @Test func finishingShortOfTheDeclaredLengthFails() {
        let stream = RequestStream(length: 4, highWater: 1024)
        _ = stream.write([1, 2, 3], generation: 0)
        _ = stream.finish(generation: 0, trailers: nil)
        #expect(read(stream).0 == .failed)
        #expect(stream.failure?.message == "the request body's producer wrote 3 of the 4 bytes it declared")
    }

    @Test func aReplayableStreamRewindsToANewGenerationAndTheOldWriterIsRefused() {
        let stream = RequestStream(length: nil, highWater: 1024)
        _ = stream.write([1, 2, 3], generation: 0)
        _ = read(stream)
        let (rewound, _) = stream.rewind(replayable: true)
        #expect(rewound)
        #expect(stream.generation == 1)
        #expect(stream.write([9], generation: 0).error?.code == .cancelled)
        _ = stream.write([4, 5], generation: 1)
        #expect(read(stream).1 == [4, 5])
    }

    @Test func aOneShotStreamRewindsOnlyWhileNothingWasTaken() {
        let stream = RequestStream(length: nil, highWater: 1024)
        _ = stream.write([1, 2, 3], generation: 0)
        #expect(stream.rewind(replayable: false).0)
        #expect(stream.generation == 0)
        _ = read(stream)
        #expect(!stream.rewind(replayable: false).0)
    }

    @Test func aClosedStreamRefusesWritesAndEndsTheLoopsReads() {
        let stream = RequestStream(length: nil, highWater: 1024)
        _ = stream.write([1], generation: 0)
        stream.close()
        #expect(stream.write([2], generation: 0).error?.code == .cancelled)
        #expect(read(stream).0 == .failed)
        #expect(stream.isClosed)
    }

    @Test func trailersArriveWithTheEnd() {
        let stream = RequestStream(length: nil, highWater: 1024)
        _ = stream.finish(generation: 0, trailers: [.init("X-Checksum")!: "abc"])
        #expect(read(stream).0 == .end)
        #expect(stream.trailers?[.init("X-Checksum")!] == "abc")
    }
}
