// Curlew — where a buffered response body's bytes go as they arrive.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Collects a buffered response body in one growing malloc'd buffer that becomes the response's `Data`
/// without a copy; fed on the loop thread from curl's write callback.
///
/// A value kept inside its transfer's ``TransferContext`` (an object of its own cost an allocation and
/// an existential call per write). Its owner calls ``release()`` when it is dropped without
/// ``finish()``: the buffer is manual memory.
struct MemoryBodySink {
    private var base: UnsafeMutableRawPointer?
    private var count = 0
    private var capacity = 0
    /// The announced length: once the up-front reservation is full, the buffer grows straight to it
    /// instead of doubling its way there.
    private var announced = 0

    init() {}

    /// Bytes currently held in memory (capacity, not count), for the engine's memory counters.
    var bufferedBytes: Int { capacity }

    /// A hint, once the head is complete: `length` body bytes are announced (already capped at the body
    /// limit), of which `reserve` may be allocated up front.
    mutating func expect(length: Int, reserve: Int) {
        announced = length
        if reserve > capacity { _ = grow(to: reserve) }
    }

    /// Takes the next decoded bytes. Returns false when the bytes could not be stored.
    mutating func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return true }
        let needed = count + bytes.count
        if needed > capacity {
            // Up to the announced length in one step; beyond it (or with none) doubling keeps appends
            // amortised O(1). The first allocation takes at least 4 KiB.
            let target = needed <= announced ? announced : max(needed, capacity * 2, 4096)
            guard grow(to: target) else { return false }
        }
        guard let base else { return false }
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count = needed
        return true
    }

    /// Ends the body and hands over what was collected; the sink is empty afterwards.
    mutating func finish() -> Data {
        guard var base, count > 0 else { return Data() }
        // Doubling can leave up to half the buffer unused; give large slack back before handing it over.
        if capacity - count > max(64 * 1024, count / 4), let shrunk = realloc(base, count) { base = shrunk }
        let taken = count
        self.base = nil
        capacity = 0
        count = 0
        return Data(bytesNoCopy: base, count: taken, deallocator: .free)
    }

    /// Frees what was collected and not handed over.
    mutating func release() {
        free(base)
        base = nil
        capacity = 0
        count = 0
    }

    private mutating func grow(to newCapacity: Int) -> Bool {
        guard let grown = realloc(base, newCapacity) else { return false }
        base = grown
        capacity = newCapacity
        return true
    }
}
