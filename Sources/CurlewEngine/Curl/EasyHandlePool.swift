// Curlew — easy handles kept for reuse between transfers.

import CCurl
import Synchronization

/// A bounded stack of reset easy handles (loop thread only).
///
/// Reuse spares an allocation and initialisation of curl's large per-handle state on every request.
/// Each returned handle is `curl_easy_reset` and given the session defaults again, so nothing of one
/// request leaks into the next. `curl_easy_reset` keeps the socket error (`CURLINFO_OS_ERRNO`) of the
/// last failure, which error classification reads: a handle that saw one is destroyed, not kept, so
/// every pooled handle starts from 0.
struct EasyHandlePool {
    private var handles: [EasyHandle] = []
    let capacity: Int
    let counters: EngineCounters

    init(capacity: Int, counters: EngineCounters) {
        self.capacity = max(0, capacity)
        self.counters = counters
        handles.reserveCapacity(min(self.capacity, 1024))
    }

    /// A handle with the session defaults applied: from the pool, or new.
    mutating func take(_ defaults: HandleDefaults) -> EasyHandle? {
        if let handle = handles.popLast() {
            counters.pooledHandles.store(handles.count, ordering: .relaxed)
            return handle
        }
        guard let handle = EasyHandle() else { return nil }
        counters.handlesCreated.add(1, ordering: .relaxed)
        handle.applyDefaults(defaults)
        return handle
    }

    /// Resets a handle and keeps it, or destroys it when the pool is full or it may not be reused.
    mutating func give(_ handle: EasyHandle, _ defaults: HandleDefaults, reusable: Bool = true) {
        guard reusable, handles.count < capacity, !handle.sawSocketError else { return handle.destroy() }
        curl_easy_reset(handle.raw)
        handle.applyDefaults(defaults)
        handles.append(handle)
        counters.pooledHandles.store(handles.count, ordering: .relaxed)
    }

    /// Destroys every pooled handle.
    mutating func drain() {
        for handle in handles { handle.destroy() }
        handles.removeAll()
        counters.pooledHandles.store(0, ordering: .relaxed)
    }
}
