// Curlew — easy handles kept for reuse between transfers.

import CCurl
import Synchronization

/// A bounded stack of reset easy handles (loop thread only).
///
/// Reuse spares an allocation and initialisation of curl's large per-handle state on every request.
/// A returned handle is `curl_easy_reset` and given the session defaults again, so nothing of one
/// request leaks into the next, unless it ran a plain request: then it keeps that request's options,
/// which the next plain request of the same shape sets again, and any other request resets it first
/// (see ``HandleResidue``). `curl_easy_reset` keeps the socket error (`CURLINFO_OS_ERRNO`) of the
/// last failure, which error classification reads: a handle that saw one is destroyed, not kept, so
/// every pooled handle starts from 0.
struct EasyHandlePool {
    private var handles: [(handle: EasyHandle, residue: HandleResidue)] = []
    let capacity: Int
    let counters: EngineCounters

    init(capacity: Int, counters: EngineCounters) {
        self.capacity = max(0, capacity)
        self.counters = counters
        handles.reserveCapacity(min(self.capacity, 1024))
    }

    /// A handle with the session defaults applied, and what it carries beyond them: from the pool, or new.
    mutating func take(_ defaults: HandleDefaults) -> (handle: EasyHandle, residue: HandleResidue)? {
        if let pooled = handles.popLast() {
            counters.pooledHandles.store(handles.count, ordering: .relaxed)
            return pooled
        }
        guard let handle = EasyHandle() else { return nil }
        counters.handlesCreated.add(1, ordering: .relaxed)
        handle.applyDefaults(defaults)
        return (handle, .defaults)
    }

    /// Keeps a handle, reset unless it carries a plain request's options (`residue`), or destroys it when
    /// the pool is full or it may not be reused.
    mutating func give(_ handle: EasyHandle, _ defaults: HandleDefaults, residue: HandleResidue?, reusable: Bool = true) {
        guard reusable, handles.count < capacity, !handle.sawSocketError else { return handle.destroy() }
        if let residue {
            handles.append((handle, residue))
        } else {
            Self.reset(handle, defaults)
            handles.append((handle, .defaults))
        }
        counters.pooledHandles.store(handles.count, ordering: .relaxed)
    }

    /// Back to the session defaults: nothing of an earlier request stays on the handle.
    static func reset(_ handle: EasyHandle, _ defaults: HandleDefaults) {
        curl_easy_reset(handle.raw)
        handle.applyDefaults(defaults)
    }

    /// Destroys every pooled handle.
    mutating func drain() {
        for (handle, _) in handles { handle.destroy() }
        handles.removeAll()
        counters.pooledHandles.store(0, ordering: .relaxed)
    }
}
