// Curlew — counters the engine keeps about itself, readable from any thread.

import Synchronization

/// Live counters updated on the loop thread and read from anywhere (relaxed atomics: each value is
/// exact on its own; a snapshot of several is not one instant).
final class EngineCounters: Sendable {
    let activeTransfers = Atomic<Int>(0)
    let queuedTransfers = Atomic<Int>(0)
    let openConnections = Atomic<Int>(0)
    let peakOpenConnections = Atomic<Int>(0)
    let pooledHandles = Atomic<Int>(0)
    let handlesCreated = Atomic<Int>(0)
    let bufferedBytes = Atomic<Int>(0)
    let peakBufferedBytes = Atomic<Int>(0)
    let largestTransferBuffer = Atomic<Int>(0)
    let completedTransfers = Atomic<Int>(0)
    let failedTransfers = Atomic<Int>(0)
    let cancelledTransfers = Atomic<Int>(0)
    let connectionsOpened = Atomic<Int>(0)
    let socketsWatched = Atomic<Int>(0)
    let epollControlCalls = Atomic<Int>(0)

    func bufferAdjust(by delta: Int) {
        let now = bufferedBytes.add(delta, ordering: .relaxed).newValue
        if now > peakBufferedBytes.load(ordering: .relaxed) { peakBufferedBytes.store(now, ordering: .relaxed) }
    }

    func socketOpened() {
        let now = openConnections.add(1, ordering: .relaxed).newValue
        if now > peakOpenConnections.load(ordering: .relaxed) { peakOpenConnections.store(now, ordering: .relaxed) }
    }

    func socketClosed() {
        openConnections.subtract(1, ordering: .relaxed)
    }

    func noteTransferBuffer(_ bytes: Int) {
        if bytes > largestTransferBuffer.load(ordering: .relaxed) { largestTransferBuffer.store(bytes, ordering: .relaxed) }
    }
}
