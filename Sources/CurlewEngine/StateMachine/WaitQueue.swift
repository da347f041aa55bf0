// Curlew — a FIFO of waiting transfers whose cancelled members are skipped, not searched for.

/// The transfers waiting for one pool key, oldest first.
///
/// Cancelling a waiting transfer must cost O(1) however long the queue is, so the queue never searches:
/// the owner marks the transfer's slot free, and the stale identifier is dropped when it reaches the
/// front. Appending and taking from the front are amortised O(1).
struct WaitQueue {
    private var items: [TransferID] = []
    private var head = 0

    /// Identifiers still stored, stale ones included.
    var storedCount: Int { items.count - head }

    mutating func append(_ id: TransferID) {
        items.append(id)
    }

    /// Puts `id` before every other waiting transfer (a redirect hop of a request already admitted).
    mutating func prepend(_ id: TransferID) {
        if head > 0 {
            head -= 1
            items[head] = id
        } else {
            items.insert(id, at: 0)
        }
    }

    /// The identifier at the front, stale or not.
    var first: TransferID? { head < items.count ? items[head] : nil }

    /// Drops the identifier at the front.
    mutating func removeFirst() {
        guard head < items.count else { return }
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: items.capacity <= 1024)
            head = 0
        } else if head >= 64, head * 2 >= items.count {
            // Reclaim the consumed prefix once it is at least half the storage.
            items.removeSubrange(0..<head)
            head = 0
        }
    }
}
