// Curlew — the state machine's timers: one entry per transfer, removed when the transfer ends.

/// A min-heap of deadlines keyed by transfer slot, with each slot's position tracked so a deadline can
/// be changed or removed in O(log n).
///
/// Removing a finished transfer's timer at once keeps the heap as small as the transfers the machine
/// holds; leaving stale entries until they came due (60 s later, for the default total timeout) grew
/// it by every request of the last minute.
struct TimerHeap {
    /// Slots, in heap order.
    private var heap: [Int32] = []
    /// Per slot: its deadline, and its position in `heap` (-1 when it has no timer).
    private var deadlines: [UInt64] = []
    private var positions: [Int32] = []

    var isEmpty: Bool { heap.isEmpty }

    /// The soonest deadline and its slot.
    var first: (slot: Int, deadline: UInt64)? {
        guard let slot = heap.first else { return nil }
        return (Int(slot), deadlines[Int(slot)])
    }

    /// Sets (or moves) the slot's timer to `deadline`.
    mutating func set(_ slot: Int, _ deadline: UInt64) {
        if slot >= positions.count {
            let grow = slot + 1 - positions.count
            positions.append(contentsOf: repeatElement(-1, count: grow))
            deadlines.append(contentsOf: repeatElement(0, count: grow))
        }
        let position = Int(positions[slot])
        if position < 0 {
            deadlines[slot] = deadline
            heap.append(Int32(slot))
            positions[slot] = Int32(heap.count - 1)
            siftUp(heap.count - 1)
        } else {
            let old = deadlines[slot]
            deadlines[slot] = deadline
            if deadline < old { siftUp(position) } else { siftDown(position) }
        }
    }

    /// Removes the slot's timer, if it has one.
    mutating func remove(_ slot: Int) {
        guard slot < positions.count else { return }
        let position = Int(positions[slot])
        guard position >= 0 else { return }
        positions[slot] = -1
        let last = heap.removeLast()
        guard position < heap.count else { return }
        heap[position] = last
        positions[Int(last)] = Int32(position)
        siftDown(position)
        siftUp(position)
    }

    mutating func removeAll() {
        for slot in heap { positions[Int(slot)] = -1 }
        heap.removeAll()
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard deadlines[Int(heap[child])] < deadlines[Int(heap[parent])] else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, deadlines[Int(heap[left])] < deadlines[Int(heap[smallest])] { smallest = left }
            if right < heap.count, deadlines[Int(heap[right])] < deadlines[Int(heap[smallest])] { smallest = right }
            guard smallest != parent else { return }
            swapAt(parent, smallest)
            parent = smallest
        }
    }

    private mutating func swapAt(_ i: Int, _ j: Int) {
        heap.swapAt(i, j)
        positions[Int(heap[i])] = Int32(i)
        positions[Int(heap[j])] = Int32(j)
    }
}
