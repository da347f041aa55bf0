// Curlew — every libcurl behaviour that differs between the versions Curlew runs on, decided once from
// the loaded library's version: what each flag means, the versions it applies to, the curl change that
// brought or fixed it, and how Curlew keeps its guarantee where the library does not.

/// How the loaded libcurl behaves where versions differ. One flag per behaviour, each true on the
/// versions that have it; the engine reads these flags and never a version number.
///
/// Sessions take ``current``; tests may set a flag on any version to run the fallback that goes with it.
struct CurlQuirks: Sendable, Hashable {
    /// **Before 7.88.0:** a paused HTTP/2 stream stalls every other stream on its connection. Data for a
    /// stream whose buffer is full made nghttp2 halt the whole connection's input until that stream read
    /// it, which a paused stream never does (fixed by curl 8c762f5998, #10444, in 7.88.0).
    ///
    /// Curlew: a streamed response (the only kind that pauses) to an https host goes over HTTP/1.1, on a
    /// connection of its own; with prior knowledge over cleartext (HTTP/2 or nothing), every request gets
    /// a connection of its own (``priorKnowledgeReusesConnections``).
    var pausedHTTP2StreamStallsConnection: Bool

    /// **8.1.0 to 8.3.x:** a paused HTTP/2 stream's flow control is unreliable after libcurl's HTTP/2
    /// rewrite (744dcf22fa, #10771, in 8.1.0), settled by 8.4.0: seen with Curlew's suite, a paused stream
    /// alone on its connection kept being read (8.1.2), and a paused event stream lost most of its data
    /// once it was read again (8.3.0).
    ///
    /// Curlew: as for ``pausedHTTP2StreamStallsConnection``.
    var pausedHTTP2StreamLosesFlowControl: Bool

    /// **8.5.0:** libcurl asks to watch a paused HTTP/1.1 transfer's socket for reading, and every read
    /// goes into its pause buffer, up to 64 MiB, before the transfer fails with CURLE_OUT_OF_MEMORY
    /// (brought by 47f5b1a37f, #11833, in 8.5.0; fixed by a0f94800d5, #12640, in 8.6.0). libcurl reads a
    /// paused transfer's socket only when told it is readable.
    ///
    /// Curlew: the socket of an HTTP/1.x transfer paused for receiving is not watched for reading until
    /// the transfer resumes.
    var pausedTransferSocketStaysReadable: Bool

    /// **Before 8.15.0:** the RST_STREAM of an HTTP/2 stream aborted early may wait for the connection's
    /// next frames: from 7.88.0 it is queued with the small frames and sent only with the next ones
    /// (ead2b2d4f6, #10432; fixed by 1454aa17d6, #17638, in 8.15.0), and 7.87.0 was seen not to send it
    /// either. On a connection nothing else uses, the server keeps the stream open.
    ///
    /// Curlew: an aborted transfer's connection is closed, unless other streams still use it.
    var abortedStreamResetIsDelayed: Bool

    /// **7.64.0 to 8.6.x:** an easy handle that sent trailers corrupts memory on its next chunked upload:
    /// its trailer state is never reset (the code was replaced by client readers, 9369c30cd8, in 8.7.0).
    ///
    /// Curlew: such a handle is destroyed after its transfer instead of being pooled.
    var trailersSpoilTheHandle: Bool

    /// **7.88.x:** an HTTP/2 upload whose stream has no flow-control window left keeps asking to write to
    /// the socket and writes nothing, a busy loop for as long as the server takes to read (brought by
    /// 71b7e01610 in 7.88.0; fixed by d9ccc75b00, #10627, and 06f65f771b, #10753, in 8.0.0).
    ///
    /// Curlew: a socket curl could not write to is not watched for writability until it is readable (the
    /// window update arrives as data) or 20 ms have passed.
    var http2UploadSpinsWithoutWindow: Bool

    /// **8.4.x, 8.5.x, 8.6.x and 8.10.x:** HTTP/2 uploads read through the read callback (a stream, a file,
    /// a form with files) can stall until a timeout. Seen with Curlew's suite: on 8.4.0 a body still being
    /// produced when the response ended is sent no further (the exchange waits for its total timeout, or
    /// for ever); on 8.5.0 a small write to a
    /// streamed upload that nothing follows is not sent in about half the runs (settled by 8.6.0); on
    /// 8.6.0 and 8.10.x an early answer, an echo interleaved with the upload, an empty or slowly read body
    /// wait (8.6.0 reworked the transfer loop, d7b6ce64ce, #12480, settled by 8.7.0; 35bf766280, #14253,
    /// in 8.10.0, settled by 8.11.0). Not bisected further; 8.7, 8.8, 8.9 and 8.11 pass the suite.
    ///
    /// Curlew: such a request to an https host goes over HTTP/1.1 (bodies in memory, given to libcurl
    /// whole, still use HTTP/2).
    var http2UploadsStall: Bool

    /// **Before 8.1.0:** over HTTP/2, the end of an upload read through the read callback can drop
    /// response bytes of another stream on the same connection. When a stream's buffer is full (its
    /// reader paused), libcurl halts nghttp2 and keeps the rest of the DATA frame in the connection's
    /// input buffer; an upload that ends with libcurl not counting down its length (no length given, or
    /// cut short by an early answer) feeds that input to nghttp2 again without checking the halt
    /// (`http2_data_done_send`), and the paused stream's next frame replaces the kept one. The paused
    /// download fails with CURLE_PARTIAL_FILE, "transfer closed with 8192 bytes remaining" (one nginx
    /// frame). Found by the soak on 7.88.1: 28 of 8,003 downloads mixed with streamed uploads, none on
    /// 8.14.1. Gone with libcurl's HTTP/2 rewrite (744dcf22fa, #10771, in 8.1.0), which no longer halts
    /// nghttp2 for a full stream.
    ///
    /// Curlew: as for ``http2UploadsStall``.
    var uploadEndDropsPausedStreamData: Bool

    /// **Before 8.5.0, and 8.10.0:** over HTTP/2, when a request body's END_STREAM goes out after the
    /// response has ended, libcurl neither ends the transfer nor schedules another run: the finished
    /// exchange waits for a timeout. A multiplexed transfer whose response had ended kept sending until
    /// 331b89a319 (#11756, 8.3.0); a flow-control hold could still stick until 47f5b1a37f (#11833, 8.5.0);
    /// 35bf766280 (8.10.0) brought the wait back for one release.
    ///
    /// Curlew: the transfer's send direction is paused and resumed at once, which makes libcurl run it
    /// again with its socket treated as readable.
    var endedStreamNeedsAnotherRun: Bool

    /// **From 8.10.0:** over HTTP/2, a request body still being sent after the response ended is sent to
    /// its end (so since 8.6.0, d7b6ce64ce, #12480), and the send that closes the stream fails with
    /// CURLE_SEND_ERROR ("stream closed"), failing an exchange whose response had arrived whole:
    /// 35bf766280 (#14253, 8.10.0) dropped the guard on the closed-stream check, where 8.10.0 mostly waits
    /// instead, and 70d3a9b6aa (#14877, 8.10.1) made it fail. Not fixed in a release as of 8.21.0.
    ///
    /// Curlew: a transfer that fails so after its final head, with no socket error and once its whole
    /// request body was handed to libcurl, succeeds: the server had closed its side normally (a reset with
    /// an error code is CURLE_HTTP2_STREAM).
    var uploadAfterCompleteResponseFails: Bool

    /// **Before 8.1.1:** over HTTP/2, an upload whose response arrives whole before the request body is
    /// sent (an early answer, which nginx follows with RST_STREAM NO_ERROR, as RFC 9113 §8.1 allows)
    /// stalls: libcurl neither sends more nor ends the transfer, which waits for the idle timeout. Seen on
    /// 7.88.1 every time against nginx 1.22 answering a 1 MiB POST with `return 200` (found by the soak);
    /// 8.14.1 ends such a transfer at once. Fixed by #11165 and #11176 (8.1.1: an RST stream no longer
    /// waits for a send "drain", a closed stream on hold no longer keeps the transfer alive). When both
    /// frames arrive in one read, 7.88 drops the answer and fails with CURLE_HTTP2_STREAM instead, which
    /// nothing outside libcurl can take back.
    ///
    /// Curlew: once such a response is whole (its `Content-Length` received, or a 204, 304 or HEAD
    /// answer) while the request body is not, and nothing has moved for ``earlyAnswerGrace`` although
    /// libcurl is not waiting for the body's producer, the exchange completes with the response; the rest
    /// of the body is not sent.
    var earlyAnswerStallsHTTP2Upload: Bool

    /// How long a transfer answered whole before its request body was sent may sit with nothing moving
    /// before it completes (``earlyAnswerStallsHTTP2Upload``): long enough for an upload the server still
    /// reads to show progress on a loaded machine (100 ms cut a full-duplex exchange under the suite and
    /// the soak together), short against any idle timeout.
    static let earlyAnswerGrace: UInt64 = 1_000_000_000

    /// **Before 8.15.0:** `CURLOPT_MAXAGE_CONN` and `CURLOPT_MAXLIFETIME_CONN` compare whole seconds,
    /// truncated, with `>` (a connection idle for 2.9 s is "2 s" idle), and a maximum idle time of 0 means
    /// "idle for under a second". From 8.15.0 (e39b8c4819, #17571) they compare milliseconds, and 0 turns
    /// the idle limit off.
    ///
    /// Curlew: the value set is chosen for the library's rule, so a limit holds to the second on both.
    var connectionAgesInWholeSeconds: Bool

    /// **From 8.17.0:** a connection is retired after 24 hours by default (c184f464f7); before, it had no
    /// age limit.
    ///
    /// Curlew: a session without ``ConnectionOptions/maxLifetime`` sets no limit explicitly, as documented.
    var connectionLifetimeHasDefault: Bool

    /// **7.88.x:** a cleartext HTTP/2 prior-knowledge connection that carries a second request gets a
    /// second HTTP/2 layer, which breaks it with "Error in the HTTP2 framing layer" (curl#10634; brought by
    /// 71b7e01610 in 7.88.0, fixed by cbe9d82c22, #10643, in 8.0.0).
    ///
    /// Curlew: each such request gets a connection of its own (``priorKnowledgeReusesConnections``).
    var priorKnowledgeReuseBreaks: Bool

    /// **Before 8.1.0:** a transfer removed while libcurl holds bytes from a paused write keeps them in its
    /// easy handle when its connection still carries other transfers (HTTP/2): `multi_done` returns before
    /// freeing the pause buffer when the connection is in use (81b2b577df, 8.1.0, frees it first), and
    /// `curl_easy_reset` does not touch it. The handle's next transfer gets those bytes, ahead of its own,
    /// the first time it leaves a pause (found by the soak on 7.88: streamed uploads answered with the
    /// bytes of an abandoned download, downloads longer than their `Content-Length`).
    ///
    /// Curlew: a transfer whose receive direction ever paused is resumed into a callback that drops what
    /// libcurl kept, before its handle leaves the multi handle.
    var pausedBytesOutliveTheTransfer: Bool

    /// **7.88.x:** `curl_easy_reset` loses the list of cookie files `CURLOPT_COOKIEFILE` appends to without
    /// freeing it (af5999a674, 7.88.0, moved the list into the options the reset clears; b559ef6f36,
    /// #10709, 8.0.0, frees it there). Turning the cookie engine on with `CURLOPT_COOKIEFILE` for every
    /// transfer of a pooled handle leaked one list node and its copy of the name per request (found by
    /// LeakSanitizer: 64 nodes over the suite).
    ///
    /// Curlew: on these versions the engine is turned on with `CURLOPT_COOKIEJAR` set to no file, which
    /// enables it (in every version) without a list; nothing is ever written to a file.
    var cookieFileListLeaksOnReset: Bool

    /// **8.6.x:** the time to first byte (`CURLINFO_STARTTRANSFER_TIME_T`) is stamped with the first body
    /// byte (brought by d7b6ce64ce, #12480, in 8.6.0; fixed by c426277b59, #13052, in 8.7.0), so a
    /// response without a body (a 204, a redirect) has none.
    ///
    /// Curlew: the first header line's arrival by the loop's clock, never past curl's total.
    var firstByteWaitsForTheBody: Bool

    // Not a flag: before 7.87.0 a transfer on a reused connection reports the time taken to find the
    // connection as its connect and, over TLS, its handshake (`Curl_setup_conn` stamps them for a
    // connection already up; the connection filters of 7.87.0 stamp them only when connecting). Curlew
    // has lookup, connect and handshake zero on every reused connection (`ResponseBuilder.timings`).

    // Not a flag, for every version so far: libcurl decodes a whole socket read before a pause takes
    // effect (a 64 KiB read of a bomb becomes 66 MiB in its pause buffer), so Curlew decodes streamed
    // responses itself (see `ContentDecoder`).

    /// The quirks of libcurl `version`.
    init(version: LibcurlVersion) {
        pausedHTTP2StreamStallsConnection = version < LibcurlVersion(7, 88, 0)
        pausedHTTP2StreamLosesFlowControl = version >= LibcurlVersion(8, 1, 0) && version < LibcurlVersion(8, 4, 0)
        pausedTransferSocketStaysReadable = version >= LibcurlVersion(8, 5, 0) && version < LibcurlVersion(8, 6, 0)
        abortedStreamResetIsDelayed = version < LibcurlVersion(8, 15, 0)
        trailersSpoilTheHandle = version < LibcurlVersion(8, 7, 0)
        http2UploadSpinsWithoutWindow = version >= LibcurlVersion(7, 88, 0) && version < LibcurlVersion(8, 0, 0)
        http2UploadsStall = [LibcurlVersion(8, 4, 0), LibcurlVersion(8, 5, 0), LibcurlVersion(8, 6, 0), LibcurlVersion(8, 10, 0)]
            .contains(version.minorRelease)
        uploadEndDropsPausedStreamData = version < LibcurlVersion(8, 1, 0)
        endedStreamNeedsAnotherRun = version < LibcurlVersion(8, 5, 0) || version.minorRelease == LibcurlVersion(8, 10, 0)
        uploadAfterCompleteResponseFails = version >= LibcurlVersion(8, 10, 0)
        earlyAnswerStallsHTTP2Upload = version < LibcurlVersion(8, 1, 1)
        connectionAgesInWholeSeconds = version < LibcurlVersion(8, 15, 0)
        connectionLifetimeHasDefault = version >= LibcurlVersion(8, 17, 0)
        priorKnowledgeReuseBreaks = version >= LibcurlVersion(7, 88, 0) && version < LibcurlVersion(8, 0, 0)
        firstByteWaitsForTheBody = version.minorRelease == LibcurlVersion(8, 6, 0)
        cookieFileListLeaksOnReset = version >= LibcurlVersion(7, 88, 0) && version < LibcurlVersion(8, 0, 0)
        pausedBytesOutliveTheTransfer = version < LibcurlVersion(8, 1, 0)
    }

    /// The loaded library's quirks.
    static let current = CurlQuirks(version: Libcurl.loaded.version)

    /// Whether a cleartext prior-knowledge connection may carry more than one request: not where reuse
    /// breaks it, nor where a paused stream would stall the others on it or lose its flow control.
    var priorKnowledgeReusesConnections: Bool { !priorKnowledgeReuseBreaks && !streamedResponsesAvoidHTTP2 }

    /// Whether a streamed response to an https host goes over an HTTP/1.1 connection of its own.
    var streamedResponsesAvoidHTTP2: Bool { pausedHTTP2StreamStallsConnection || pausedHTTP2StreamLosesFlowControl }

    /// Whether a request body read through libcurl's read callback (a stream, a file, a form with files) to
    /// an https host goes over HTTP/1.1 (``http2UploadsStall``, ``uploadEndDropsPausedStreamData``).
    var callbackUploadsAvoidHTTP2: Bool { http2UploadsStall || uploadEndDropsPausedStreamData }

    /// Whether some transfers to an https host avoid HTTP/2 (see ``streamedResponsesAvoidHTTP2`` and
    /// ``callbackUploadsAvoidHTTP2``).
    var someTransfersAvoidHTTP2: Bool { streamedResponsesAvoidHTTP2 || callbackUploadsAvoidHTTP2 }
}
