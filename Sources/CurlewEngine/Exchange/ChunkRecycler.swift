// Curlew — the arrays a streamed response's bulk deliveries are copied into, used again once the reader
// has let go of them.

/// Storage for a streamed response's bulk deliveries (see ``Exchange/bulkDelivery``), taken again once
/// nothing else holds it.
///
/// libcurl reuses its receive buffer once the write callback returns, so each delivery is copied out.
/// Into fresh arrays, a fast download makes the allocator hand freed memory back to the system and take
/// it again (glibc trims its heap once 128 KiB are free at the top): measured on a 256 MiB download, about
/// 70,000 page faults and a third of the loop thread's time. Used again, the same few arrays stay mapped
/// and in the cache.
///
/// A value the loop thread owns (in the transfer's ``TransferContext``). A slot is written again only
/// when it holds the only reference to its storage: `removeAll(keepingCapacity:)` keeps the storage then,
/// and otherwise gives the slot new storage and leaves the old one to whoever still holds it (the buffer,
/// the reader, a caller that kept the chunk), whose bytes therefore never change. Slots are taken in
/// turn, oldest first, as the reader takes chunks in order; finding the oldest still held means more
/// chunks are in flight than there are slots, and the ring gains one, up to ``slotLimit``.
struct ChunkRecycler {
    private var slots: [[UInt8]] = []
    /// The slot the next delivery goes into.
    private var next = 0
    /// The most slots kept: a stream holds at most its receive buffer and its high mark's cap, so more
    /// would only keep a caller's chunks company. 0 keeps none.
    let slotLimit: Int

    init(slotLimit: Int) {
        self.slotLimit = max(0, slotLimit)
    }

    /// The storage for a streamed response side: slots for what it can hold when its mark grows (a
    /// download), none when it never does (an event stream, idle for hours, keeps no storage of its own).
    init(for side: ExchangeStateMachine.ResponseSide) {
        self.init(slotLimit: side.grows ? side.ceiling / Exchange.bulkDelivery + 2 : 0)
    }

    /// The slots kept (for the table tests).
    var slotCount: Int { slots.count }

    /// A chunk holding a copy of `bytes`, in storage used before where it is free.
    mutating func chunk(copying bytes: UnsafeRawBufferPointer) -> [UInt8] {
        guard slotLimit > 0 else { return [UInt8](bytes) }
        if slots.isEmpty { slots.append([]) }
        let index = next
        let storage = slots[index].withUnsafeBufferPointer { $0.baseAddress }
        slots[index].removeAll(keepingCapacity: true)
        let reused = slots[index].withUnsafeBufferPointer { $0.baseAddress } == storage
        slots[index].append(contentsOf: bytes)
        let chunk = slots[index]
        next = index + 1 == slots.count ? 0 : index + 1
        if !reused, slots.count < slotLimit {
            // The oldest slot was still held: a new one, taken next, so the ring covers what is in flight.
            slots.insert([], at: index + 1)
            next = index + 1
        }
        return chunk
    }
}
