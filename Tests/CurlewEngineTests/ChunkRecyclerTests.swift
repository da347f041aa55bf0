// Curlew — the storage of a streamed response's bulk deliveries: used again once released, never written
// under a chunk someone still holds, and as many slots as there are chunks in flight, up to the limit.

@testable import CurlewEngine
import Testing

/// Where an array's bytes live (its storage's identity).
private func address(_ chunk: [UInt8]) -> UnsafeRawPointer? {
    chunk.withUnsafeBytes { $0.baseAddress }
}

/// `count` bytes, all `value`.
private func delivery(_ value: UInt8, _ count: Int = 64 * 1024) -> [UInt8] {
    [UInt8](repeating: value, count: count)
}

private func copy(_ bytes: [UInt8], into recycler: inout ChunkRecycler) -> [UInt8] {
    bytes.withUnsafeBytes { recycler.chunk(copying: $0) }
}

@Suite struct ChunkRecyclerTests {
    @Test func aReleasedChunksStorageHoldsTheNextDelivery() {
        var recycler = ChunkRecycler(slotLimit: 8)
        var first: [UInt8]? = copy(delivery(1), into: &recycler)
        let storage = first.map(address)
        #expect(first == delivery(1))
        first = nil
        let second = copy(delivery(2), into: &recycler)
        #expect(second == delivery(2))
        #expect(address(second) == storage)
        #expect(recycler.slotCount == 1)
    }

    @Test func aChunkStillHeldKeepsItsBytesAndTheRingGrowsByOne() {
        var recycler = ChunkRecycler(slotLimit: 8)
        let held = copy(delivery(1), into: &recycler)
        let next = copy(delivery(2), into: &recycler)
        #expect(held == delivery(1))
        #expect(next == delivery(2))
        #expect(address(next) != address(held))
        #expect(recycler.slotCount == 2)
    }

    @Test func theRingCoversTheChunksInFlightAndThenStopsAllocating() {
        var recycler = ChunkRecycler(slotLimit: 8)
        // Three chunks in flight at a time, released oldest first, as a reader that keeps up releases them.
        var inFlight: [[UInt8]] = []
        var storages = Set<UnsafeRawPointer?>()
        for round in 0..<40 {
            let chunk = copy(delivery(UInt8(round)), into: &recycler)
            #expect(chunk == delivery(UInt8(round)))
            inFlight.append(chunk)
            if round >= 20 { storages.insert(address(chunk)) }
            if inFlight.count == 3 { inFlight.removeFirst() }
        }
        #expect(recycler.slotCount == 3)
        // In the steady state the same three storages are written in turn.
        #expect(storages.count == 3)
        for (offset, chunk) in inFlight.enumerated() { #expect(chunk == delivery(UInt8(38 + offset))) }
    }

    @Test func aCallerKeepingEveryChunkGetsNewStorageEachTimeAndTheRingStopsAtItsLimit() {
        var recycler = ChunkRecycler(slotLimit: 4)
        var kept: [[UInt8]] = []
        for round in 0..<12 {
            kept.append(copy(delivery(UInt8(round), 20_000), into: &recycler))
        }
        #expect(recycler.slotCount == 4)
        #expect(Set(kept.map(address)).count == 12)
        for (round, chunk) in kept.enumerated() { #expect(chunk == delivery(UInt8(round), 20_000)) }
    }

    @Test func aStreamWhoseMarkNeverGrowsKeepsNoStorageAndADownloadAsMuchAsItCanHold() {
        // An event stream: 64 KiB floor and cap, 16 KiB receive buffer.
        var eventStream = ChunkRecycler(for: .streamed(floor: 64 * 1024, cap: 64 * 1024, chunkLimit: 16 * 1024))
        #expect(eventStream.slotLimit == 0)
        let chunk = copy(delivery(7, 16 * 1024), into: &eventStream)
        #expect(chunk == delivery(7, 16 * 1024))
        #expect(eventStream.slotCount == 0)
        // A download: 192 KiB floor, 4 MiB cap, 64 KiB receive buffer: (4 MiB + 64 KiB) / 16 KiB + 2.
        let download = ChunkRecycler(for: .streamed(floor: 192 * 1024, cap: 4 << 20, chunkLimit: 64 * 1024))
        #expect(download.slotLimit == 262)
    }

    @Test func aLongerDeliveryThanTheSlotsStorageIsCopiedWhole() {
        var recycler = ChunkRecycler(slotLimit: 2)
        var first: [UInt8]? = copy(delivery(1, 16 * 1024), into: &recycler)
        first = nil
        let longer = copy(delivery(2, 100 * 1024), into: &recycler)
        #expect(first == nil)
        #expect(longer == delivery(2, 100 * 1024))
        let shorter = copy(delivery(3, 16 * 1024), into: &recycler)
        #expect(shorter == delivery(3, 16 * 1024))
        #expect(longer == delivery(2, 100 * 1024))
    }
}
