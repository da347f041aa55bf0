// Curlew — the loop's timer for progress counts held back by the coalescing rule.

extension LoopThread {
    /// Reports the transfer's held-back counts at `due` (the end of its coalescing window), unless curl
    /// calls back with newer ones first.
    func scheduleProgressFlush(_ id: TransferID, at due: UInt64) {
        progressFlushes.append((id, due))
        if due < (nextProgressFlush ?? .max) { nextProgressFlush = due }
    }

    /// Reports the counts whose window has ended; transfers that ended meanwhile are skipped.
    func flushProgress() {
        var next: UInt64?
        var index = 0
        while index < progressFlushes.count {
            let (id, due) = progressFlushes[index]
            if due <= now {
                progressFlushes.swapAt(index, progressFlushes.count - 1)
                progressFlushes.removeLast()
                context(id)?.flushPendingProgress()
            } else {
                next = min(next ?? .max, due)
                index += 1
            }
        }
        nextProgressFlush = next
    }
}
