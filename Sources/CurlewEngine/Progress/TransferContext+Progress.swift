// Curlew — the loop thread's side of progress: curl's counts, coalesced before they leave the thread.

import CCurl
import CCurlShims
import HTTPTypes

extension TransferContext {
    /// curl's progress callback (often: every pass that moves bytes). Only a comparison happens here
    /// until the coalescing rule lets a report through: 50 ms since the last one, or 1% of a known
    /// total moved.
    func progressed(received: curl_off_t, sent: curl_off_t) {
        let now = shard.thread.now
        let wire = Int64(received) &+ Int64(sent)
        guard now >= nextProgressAt || wire >= nextProgressBytes else { return }
        // curl also calls while nothing moves (about once a second): no update for those.
        guard wire != lastProgressBytes || !head.isComplete != reportedBeforeHead else { return }
        lastProgressBytes = wire
        reportedBeforeHead = !head.isComplete
        reportProgress(received: Int(received), sent: Int(sent), now: now, emitting: true)
    }

    /// The counts as the transfer ended, recorded without an update of their own (the call's last
    /// update carries them).
    func recordFinalProgress() {
        guard progress != nil else { return }
        var received: curl_off_t = 0
        var sent: curl_off_t = 0
        _ = curlew_easy_getinfo_off(handle.raw, CURLINFO_SIZE_DOWNLOAD_T, &received)
        _ = curlew_easy_getinfo_off(handle.raw, CURLINFO_SIZE_UPLOAD_T, &sent)
        reportProgress(received: Int(received), sent: Int(sent), now: shard.thread.now, emitting: false)
    }

    private func reportProgress(received curlReceived: Int, sent curlSent: Int, now: UInt64, emitting: Bool) {
        guard let progress else { return }
        // Body bytes, framing left out: curl counts a chunked upload's framing, and a streamed response's
        // when the engine undoes the chunking itself. A body sent through the read callback is counted
        // as handed to curl.
        let sent = upload?.sent ?? curlSent
        let received = streams?.response != nil ? streamedBodyBytes : curlReceived
        let expected = expectedBytesToReceive
        let streamed = streams?.response != nil
        progress.report(
            sent: sent, received: received, expectedBytesToReceive: expected, decoded: streamed ? nil : receivedBodyBytes,
            emitting: emitting)
        nextProgressAt = now &+ ProgressReporter.interval
        let sendTotal = transfer.request.request.body.map { $0.knownLength } ?? 0
        if let expected, let sendTotal, expected + sendTotal > 0 {
            let step = max(1, Int64((Double(expected + sendTotal) * ProgressReporter.step).rounded(.up)))
            nextProgressBytes = Int64(received + sent) + step
        } else {
            nextProgressBytes = .max
        }
    }

    /// The final head's announced body length: 0 for a HEAD and for 204 and 304; nil before the head.
    private var expectedBytesToReceive: Int? {
        guard head.isComplete else { return nil }
        if transfer.request.request.method == .head || head.statusCode == 204 || head.statusCode == 304 { return 0 }
        return head.contentLength
    }
}
