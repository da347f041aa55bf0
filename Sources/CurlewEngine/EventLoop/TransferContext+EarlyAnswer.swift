// Curlew — an HTTP/2 exchange whose response ended before its request body: libcurl fails it at the
// body's last send on some versions, and lets it stall on older ones.

import CCurl
import CCurlShims
import HTTPTypes

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

    /// The response moved: whether it is now whole before the request body is looked at once curl has
    /// returned (``CurlQuirks/earlyAnswerStallsHTTP2Upload``).
    func queueEarlyAnswerCheck() {
        earlyAnswer = .queued
        shard.thread.pass.earlyAnswers.append(self)
    }

    /// Whether the final response has arrived whole over HTTP/2 while curl has not had the whole request
    /// body: its `Content-Length` handed to the engine (not curl's count, which runs ahead of what its
    /// callbacks delivered: the soak saw a 200 settled with its body still inside libcurl), or an answer
    /// without a body. A coded body is never taken as whole here (its length is the coded size).
    var answeredWholeBeforeItsBody: Bool {
        guard failure == nil, head.isComplete, head.isHTTP2, head.statusCode >= 200, !requestBodyHandedOver else {
            return false
        }
        let code = head.statusCode
        if exchange.request.request.method == .head || code == 204 || code == 304 { return true }
        guard let length = head.contentLength, !head.hasContentEncoding else { return false }
        return (exchange.streamsResponse ? streamedBodyBytes : receivedBodyBytes) >= length
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

/// The watch for a response that arrives whole before its request body was sent, on a libcurl that
/// would then stall (``CurlQuirks/earlyAnswerStallsHTTP2Upload``). Loop thread only.
enum EarlyAnswerWatch {
    /// Not watched: another libcurl, no request body, or a host spoken to over HTTP/1.1.
    case off
    /// Watched; nothing to look at this pass.
    case watching
    /// The response moved this pass: the loop looks once curl has returned.
    case queued
    /// Whole before its body: completes once nothing has moved for the grace period.
    case answered
}
