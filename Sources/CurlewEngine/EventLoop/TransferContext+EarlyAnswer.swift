// Curlew — an HTTP/2 exchange whose response ended before its request body, which libcurl fails at the
// body's last send on some versions.

import CCurl
import CCurlShims

extension TransferContext {
    /// curl's code for this transfer, with the failure of a complete exchange's last send taken back.
    ///
    /// Where libcurl sends a request body to its end after the response has ended and then fails the
    /// send that closes the stream (``CurlQuirks/uploadAfterCompleteResponseFails``), CURLE_SEND_ERROR
    /// over HTTP/2 with no socket error, after the final head and once the whole body was handed to curl,
    /// means the server had closed its side normally: a peer that reset the stream with an error gives
    /// CURLE_HTTP2_STREAM, a broken connection a socket error. The exchange is then complete.
    func settledCode(_ code: CURLcode) -> CURLcode {
        guard code == CURLE_SEND_ERROR, shard.thread.defaults.quirks.uploadAfterCompleteResponseFails, failure == nil,
            head.isComplete, head.isHTTP2, requestBodyHandedOver, !handle.sawSocketError
        else { return code }
        return CURLE_OK
    }

    /// Whether curl has had the whole request body: its end from the read callback, or as many bytes as a
    /// body given up front declares.
    private var requestBodyHandedOver: Bool {
        if requestBodyEnded { return true }
        guard let length = exchange.request.request.body?.knownLength else { return false }
        var sent: curl_off_t = 0
        _ = curlew_easy_getinfo_off(handle.raw, CURLINFO_SIZE_UPLOAD_T, &sent)
        return Int(sent) >= length
    }
}
