// Curlew — one more run for a transfer whose request body has just ended (HTTP/2, libcurl before 8.5.0 and 8.10.0).

import CCurl
import CCurlShims

extension LoopThread {
    /// Makes curl run each transfer whose request body ended this pass once more, reading included.
    ///
    /// Over HTTP/2, libcurl before 8.5.0 (and 8.10.0) neither ends nor runs again a transfer whose request
    /// body's END_STREAM goes out after the response has already ended (an early answer, or a server that
    /// speaks first and ends first; ``CurlQuirks/endedStreamNeedsAnotherRun``), so the exchange would sit
    /// until the idle timeout although it is over. Changing the pause state is
    /// libcurl's public way to have a transfer run soon with its socket treated as readable: the send
    /// direction (done by now) is paused and at once resumed, the receive direction left as it is. A run
    /// completes the transfer when the stream is closed and reads nothing otherwise.
    func runAfterUploadEnds() {
        let ended = pass.uploadEnds
        pass.uploadEnds.removeAll(keepingCapacity: true)
        for context in ended {
            // Only a transfer still running: it may have completed (or been aborted) meanwhile.
            guard self.context(context.id) === context, let paused = machine.pauseState(of: context.id) else { continue }
            _ = curl_easy_pause(context.handle.raw, Self.pauseBits(receive: paused.receive, send: true))
            _ = curl_easy_pause(context.handle.raw, Self.pauseBits(receive: paused.receive, send: paused.send))
        }
    }
}
