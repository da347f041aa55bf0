// Curlew — the loop thread's side of progress: curl's counts, coalesced before they leave the thread.

import CCurl
import CCurlShims
import HTTPTypes

extension TransferContext {
    /// curl's progress callback (often: every pass that moves bytes). Only comparisons happen here until
    /// the coalescing rule lets a report through: 50 ms since the last one, or 1% of a known total moved.
    /// Counts held back by the rule are reported when the window ends (``flushPendingProgress()``, from
    /// the loop's timer), since curl does not call back while the connection is idle.
    func progressed(received: curl_off_t, sent: curl_off_t) {
        let wire = Int64(received) &+ Int64(sent)
        // No update before a byte moves, and none for curl's calls while nothing moves (about once a second).
        guard wire > 0, wire != coalescing.lastBytes else { return }
        let now = shard.thread.now
        guard now >= coalescing.nextAt || wire >= coalescing.nextBytes else {
            coalescing.pending = (received: Int(received), sent: Int(sent))
            if !coalescing.flushScheduled {
                coalescing.flushScheduled = true
                shard.thread.scheduleProgressFlush(id, at: coalescing.nextAt)
            }
            return
        }
        coalescing.pending = nil
        coalescing.lastBytes = wire
        reportProgress(received: Int(received), sent: Int(sent), now: now, emitting: true)
    }

    /// The loop's timer for counts the coalescing rule held back: reports them now the window has ended.
    func flushPendingProgress() {
        coalescing.flushScheduled = false
        guard let pending = coalescing.pending else { return }
        coalescing.pending = nil
        coalescing.lastBytes = Int64(pending.received) &+ Int64(pending.sent)
        reportProgress(received: pending.received, sent: pending.sent, now: shard.thread.now, emitting: true)
    }

    /// The counts as the transfer ended. Bytes that moved since the last update are reported (a body's
    /// last chunk is an update of its own, before the call's completed one), except for a redirect's
    /// body, which is not the call's.
    func recordFinalProgress() {
        guard progress != nil else { return }
        coalescing.pending = nil
        var received: curl_off_t = 0
        var sent: curl_off_t = 0
        _ = curlew_easy_getinfo_off(handle.raw, CURLINFO_SIZE_DOWNLOAD_T, &received)
        _ = curlew_easy_getinfo_off(handle.raw, CURLINFO_SIZE_UPLOAD_T, &sent)
        let wire = Int64(received) &+ Int64(sent)
        let moved = wire > 0 && wire != coalescing.lastBytes
        let redirect = head.isComplete && (300..<400).contains(head.statusCode)
        coalescing.lastBytes = wire
        reportProgress(received: Int(received), sent: Int(sent), now: shard.thread.now, emitting: moved && !redirect)
    }

    private func reportProgress(received curlReceived: Int, sent curlSent: Int, now: UInt64, emitting: Bool) {
        guard let progress else { return }
        // Body bytes, framing left out: curl counts a chunked upload's framing, and a streamed response's
        // when the engine undoes the chunking itself. A body sent through the read callback is counted
        // as handed to curl.
        let sent = upload?.sent ?? curlSent
        let streamed = exchange.streamsResponse
        let received = streamed ? streamedBodyBytes : curlReceived
        let expected = expectedBytesToReceive
        progress.report(
            sent: sent, received: received, expectedBytesToReceive: expected, decoded: streamed ? nil : receivedBodyBytes,
            emitting: emitting)
        coalescing.nextAt = now &+ ProgressReporter.interval
        let sendTotal = exchange.request.request.body.map { $0.knownLength } ?? 0
        if let expected, let sendTotal, expected + sendTotal > 0 {
            let step = max(1, Int64((Double(expected + sendTotal) * ProgressReporter.step).rounded(.up)))
            coalescing.nextBytes = Int64(curlReceived + curlSent) + step
        } else {
            coalescing.nextBytes = .max
        }
    }

    /// The final head's announced body length: 0 for a HEAD and for 204 and 304; nil before the head.
    private var expectedBytesToReceive: Int? {
        guard head.isComplete else { return nil }
        if exchange.request.request.method == .head || head.statusCode == 204 || head.statusCode == 304 { return 0 }
        return head.contentLength
    }
}

/// Where a transfer's coalescing rule of progress reports stands (loop thread only).
struct ProgressCoalescing {
    /// The next report: at this time, or once the wire bytes reach this count.
    var nextAt: UInt64 = 0
    var nextBytes: Int64 = 0
    /// curl's byte count (both ways) at the last report.
    var lastBytes: Int64 = 0
    /// curl's counts the rule held back, and whether the loop's timer will report them.
    var pending: (received: Int, sent: Int)?
    var flushScheduled = false
}
