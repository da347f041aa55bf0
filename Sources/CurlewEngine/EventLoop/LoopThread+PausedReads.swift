// Curlew — a paused HTTP/1.x transfer's socket kept out of reading, on a libcurl that would read it into
// its pause buffer anyway.

import CCurl
import CCurlShims

extension LoopThread {
    /// Transfer `id` paused for receiving. On a libcurl that asks for a paused transfer's socket to be
    /// watched for reading and then reads it into its pause buffer (``CurlQuirks/pausedTransferSocketStaysReadable``),
    /// an HTTP/1.x transfer's socket, which carries nothing else, is not watched for reading until the
    /// transfer resumes or ends. (An HTTP/2 stream's unread data is bounded by its window, and the
    /// connection carries other streams.)
    func holdReads(of id: TransferID) {
        guard defaults.quirks.pausedTransferSocketStaysReadable, let context = context(id) else { return }
        context.receivePaused = true
        holdReads(of: context)
    }

    /// curl asked for events on `socket` for the transfer of `easy` (with the quirk only): a paused
    /// transfer's socket is held as soon as curl names it.
    func noteSocket(_ socket: curl_socket_t, of easy: UnsafeMutableRawPointer) {
        var pointer: UnsafePointer<CChar>?
        guard curlew_easy_getinfo_string(easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else { return }
        let context = Unmanaged<TransferContext>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
        context.socket = socket
        if context.receivePaused { holdReads(of: context) }
    }

    private func holdReads(of context: TransferContext) {
        guard context.heldReadSocket < 0, context.socket >= 0, context.head.isComplete, !context.head.isHTTP2 else { return }
        context.heldReadSocket = context.socket
        registry.holdReads(context.socket)
    }

    /// Watches a transfer's socket for reading again (it resumed, or ended).
    func releaseReads(of context: TransferContext) {
        context.receivePaused = false
        guard context.heldReadSocket >= 0 else { return }
        registry.releaseReads(context.heldReadSocket)
        context.heldReadSocket = -1
    }
}
