// Curlew — an HTTP/2 upload answered whole before its body was sent, on a libcurl that would let it stall
// (before 8.1.1): the loop completes it with the response once nothing moves.

import CCurl
import CCurlShims

extension LoopThread {
    /// Looks at the uploads whose response moved this pass: one whole before its request body gets a
    /// short idle limit, after which `settleEarlyAnswer(_:)` completes it (an upload the server still
    /// reads keeps moving and runs on).
    func watchEarlyAnswers() {
        let moved = pass.earlyAnswers
        pass.earlyAnswers.removeAll(keepingCapacity: true)
        for context in moved where context.earlyAnswer == .queued {
            context.earlyAnswer = .watching
            // Only a transfer still running: curl may have completed it (or the machine ended it) meanwhile.
            guard self.context(context.id) === context, context.answeredWholeBeforeItsBody else { continue }
            context.earlyAnswer = .answered
            machine.shortenIdleTimeout(context.id, to: CurlQuirks.earlyAnswerGrace, now: now)
        }
    }

    /// Completes a transfer answered whole before its request body, on which nothing has moved for the
    /// grace period: the response is the exchange's, as RFC 9113 §8.1 has it; the rest of the body is not
    /// sent.
    func settleEarlyAnswer(_ context: TransferContext) {
        if context.connection.attached, defaults.quirks.abortedStreamResetIsDelayed {
            // Removing the handle resets the stream only with the connection's next frames (see the abort
            // in `performActions`): a server that had not reset it would keep it open meanwhile.
            context.handle.set(CURLOPT_FORBID_REUSE, 1)
        }
        finish(context, code: CURLE_OK)
        handOverCompleted()
    }
}
