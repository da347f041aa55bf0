// Curlew — the loop's timers: a binary min-heap of deadlines with lazy removal.

/// Deadlines of the transfers the loop keeps, soonest first.
///
/// Entries are never removed early: a transfer that finishes or gets a new deadline leaves its old
/// entry behind, and the owner discards it when it surfaces (it checks the entry against the
/// transfer's current state). Insertion and removal of the minimum are O(log n).
struct DeadlineHeap<Element> {
    struct Entry {
        /// Monotonic nanoseconds.
        var deadline: UInt64
        var element: Element
    }

    private var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The soonest entry, if any.
    var first: Entry? { entries.first }

    mutating func insert(_ deadline: UInt64, _ element: Element) {
        entries.append(Entry(deadline: deadline, element: element))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the soonest entry.
    mutating func removeFirst() -> Entry? {
        guard !entries.isEmpty else { return nil }
        entries.swapAt(0, entries.count - 1)
        let first = entries.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count, entries[left].deadline < entries[smallest].deadline { smallest = left }
            if right < entries.count, entries[right].deadline < entries[smallest].deadline { smallest = right }
            guard smallest != parent else { break }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }

    mutating func removeAll() {
        entries.removeAll()
    }
}
