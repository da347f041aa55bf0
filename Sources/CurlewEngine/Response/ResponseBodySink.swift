// Curlew — where a response body's bytes go as they arrive.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A destination for response body bytes, fed on the loop thread from curl's write callback.
///
/// In-memory collection is the fast path today; a file or an async byte stream can implement the
/// same protocol.
protocol ResponseBodySink: AnyObject {
    /// A hint, once the head is complete: how many body bytes to expect, when that is known.
    func expect(length: Int)
    /// Takes the next decoded bytes. Returns false when the bytes could not be stored.
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// Bytes currently held in memory (capacity, not count), for the engine's memory counters.
    var bufferedBytes: Int { get }
    /// Ends the body and hands over what was collected.
    func finish() -> Data
}

/// Collects a body in one growing malloc'd buffer that becomes the response's `Data` without a copy.
final class MemoryBodySink: ResponseBodySink {
    private var base: UnsafeMutableRawPointer?
    private var count = 0
    private var capacity = 0

    init() {}

    deinit { free(base) }

    var bufferedBytes: Int { capacity }

    func expect(length: Int) {
        if length > capacity { _ = grow(to: length) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return true }
        let needed = count + bytes.count
        if needed > capacity {
            // Doubling keeps appends amortised O(1); the first allocation takes what arrived, at least 4 KiB.
            guard grow(to: max(needed, capacity * 2, 4096)) else { return false }
        }
        guard let base else { return false }
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count = needed
        return true
    }

    func finish() -> Data {
        guard let base, count > 0 else { return Data() }
        self.base = nil
        capacity = 0
        return Data(bytesNoCopy: base, count: count, deallocator: .free)
    }

    private func grow(to newCapacity: Int) -> Bool {
        guard let grown = realloc(base, newCapacity) else { return false }
        base = grown
        capacity = newCapacity
        return true
    }
}
