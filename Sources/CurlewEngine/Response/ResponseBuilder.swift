// Curlew — assembling a TransportResponse from a finished easy handle.

import CCurl
import CCurlShims
import HTTPTypes

#if canImport(Glibc)
import Glibc
#endif

enum ResponseBuilder {
    /// How a transfer curl finished with `code` ended: its response, or the classified error.
    static func outcome(for context: TransferContext, code: CURLcode, configuration: SessionConfiguration) -> TransferOutcome {
        if code == CURLE_OK { context.finishDecoding() }
        guard code == CURLE_OK, context.failure == nil else {
            return .failure(ErrorMapping.error(for: code, context: context, configuration: configuration))
        }
        guard context.head.isComplete else {
            // libcurl (7.88 at least) ends a transfer whose server closed the connection inside the head (after a
            // status line, before the empty line) with CURLE_OK; the response is not complete (RFC 9112 §8).
            var error = context.exchange.request.error(
                .connectionClosed, "the server closed the connection before the response head was complete")
            error.responseBytesReceived = context.head.headBytes > 0
            return .failure(error)
        }
        switch response(for: context, connectionsOpened: context.connectionsOpened) {
        case .success(let response): return .success(response)
        case .failure(let error): return .failure(error)
        }
    }

    /// Reads status, version and timings from curl and takes the collected head and body; the connection
    /// counts as reused when the transfer opened none (`connects`, read once by the caller).
    static func response(
        for context: TransferContext, connectionsOpened connects: Int
    ) -> Result<TransportResponse, TransportError> {
        let easy = context.handle.raw
        var code = 0
        _ = curlew_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code)
        guard (100...999).contains(code) else {
            return .failure(context.exchange.request.error(.invalidResponse, "the server sent no valid status line"))
        }
        var version = 0
        _ = curlew_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        var urlPointer: UnsafePointer<CChar>?
        _ = curlew_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &urlPointer)
        let effectiveURL = effectiveURL(urlPointer, requested: context.exchange.request.request.url)
        var redirectURL: String?
        if (300..<400).contains(code), context.head.hasLocation, let location = context.head.fields[.location] {
            // The Location resolved as for a streamed response (relative references included); nil when it
            // cannot be parsed. Not libcurl's CURLINFO_REDIRECT_URL, which strays from RFC 3986 where
            // `ParsedURL.resolve` does not (an empty or fragment-only reference, a request URL with a
            // fragment, a query after dot segments).
            redirectURL = ParsedURL.resolve(location, against: effectiveURL)
        }
        var response = TransportResponse(
            status: HTTPResponse.Status(code: code),
            head: context.head.makeHead(),
            body: context.sink.finish(),
            effectiveURL: effectiveURL,
            httpVersion: httpVersion(version),
            connectionReused: connects == 0,
            timings: timings(of: context, reused: connects == 0),
            redirectURL: redirectURL,
            hasLocation: context.head.hasLocation
        )
        // Checked first: building them reads the whole parser (a copy of it) for the rare response with trailers.
        if context.head.hasTrailers, let trailers = context.head.makeTrailers() { response.trailerFields = trailers }
        return .success(response)
    }

    /// The head of a streamed response, read when its final head is complete (header callback).
    static func head(for context: TransferContext) -> ResponseHead {
        let easy = context.handle.raw
        let (code, version) = statusAndVersion(of: context)
        var urlPointer: UnsafePointer<CChar>?
        _ = curlew_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &urlPointer)
        let receivedHead = context.head.makeHead()
        let url = effectiveURL(urlPointer, requested: context.exchange.request.request.url)
        var redirectURL: String?
        if (300..<400).contains(code), context.head.hasLocation, let location = receivedHead.fields[.location] {
            // libcurl works out CURLINFO_REDIRECT_URL only when the transfer ends: resolved here instead.
            redirectURL = ParsedURL.resolve(location, against: url)
        }
        let reused = context.handle.connectionsOpened == 0
        var timings = timings(of: context, reused: reused)
        timings.total = .nanoseconds(Int64(clamping: context.shard.thread.now &- min(context.shard.thread.now, context.startedAt)))
        return ResponseHead(
            status: HTTPResponse.Status(code: code), head: receivedHead, effectiveURL: url,
            httpVersion: httpVersion(version), connectionReused: reused,
            timings: timings, redirectURL: redirectURL, hasLocation: context.head.hasLocation,
            contentLength: context.head.hasContentEncoding ? nil : context.head.contentLength)
    }

    /// The status and protocol version curl reports, else what the head parser saw (curl reports neither
    /// for some transfers that ended early or were paused).
    private static func statusAndVersion(of context: TransferContext) -> (status: Int, version: Int) {
        let easy = context.handle.raw
        var code = 0
        _ = curlew_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code)
        if code == 0 { code = context.head.statusCode }
        var version = 0
        _ = curlew_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        if version == 0 { version = context.head.isHTTP2 ? Int(CURL_HTTP_VERSION_2_0) : Int(CURL_HTTP_VERSION_1_1) }
        return (code, version)
    }

    /// How a streamed transfer ended, for its hop's observer: its status, version and timings from curl,
    /// the body bytes its reader was given.
    static func hopEnd(of context: TransferContext) -> HopEnd {
        let (code, version) = statusAndVersion(of: context)
        let reused = context.handle.connectionsOpened == 0
        return HopEnd(
            status: code == 0 ? nil : code, httpVersion: code == 0 ? nil : httpVersion(version),
            timings: timings(of: context, reused: reused),
            responseBodySize: context.streamedBodyBytes, connectionReused: reused, receivePauses: context.receivePauses,
            ended: MonotonicClock.now())
    }

    /// The URL curl ended at: the request's own String when curl reports the same bytes (no redirect
    /// and no normalisation, the usual case), which saves copying it for every response.
    private static func effectiveURL(_ reported: UnsafePointer<CChar>?, requested: String) -> String {
        guard let reported else { return requested }
        let length = strlen(reported)
        var requested = requested
        let same = requested.withUTF8 { bytes in
            bytes.count == length && (length == 0 || bytes.baseAddress.map { memcmp($0, reported, length) == 0 } == true)
        }
        return same ? requested : String(cString: reported)
    }

    private static func httpVersion(_ value: Int) -> ResponseHead.HTTPVersion {
        switch value {
        case Int(CURL_HTTP_VERSION_1_0): .http1_0
        case Int(CURL_HTTP_VERSION_1_1): .http1_1
        case Int(CURL_HTTP_VERSION_2_0): .http2
        case Int(CURL_HTTP_VERSION_3): .http3
        default: .none
        }
    }

    /// The transfer's timings, the same on every libcurl. On a reused connection no lookup, connect or
    /// handshake happened: those are zero, whatever the library reports (see `CurlQuirks`). Where the
    /// library's first byte waits for the body, it is the first header line's arrival.
    static func timings(of context: TransferContext, reused: Bool) -> TransferTimings {
        let easy = context.handle.raw
        func micros(_ info: CURLINFO) -> Duration {
            var value: curl_off_t = 0
            _ = curlew_easy_getinfo_off(easy, info, &value)
            return .microseconds(value)
        }
        let total = micros(CURLINFO_TOTAL_TIME_T)
        let firstReceive = context.firstReceivedAt
        // The loop's clock, read once per pass and started before curl's: never past curl's total.
        let firstByte =
            firstReceive == 0
            ? micros(CURLINFO_STARTTRANSFER_TIME_T)
            : min(.nanoseconds(Int64(clamping: firstReceive &- min(firstReceive, context.startedAt))), total)
        return TransferTimings(
            nameLookup: reused ? .zero : micros(CURLINFO_NAMELOOKUP_TIME_T),
            connect: reused ? .zero : micros(CURLINFO_CONNECT_TIME_T),
            tlsHandshake: reused ? .zero : micros(CURLINFO_APPCONNECT_TIME_T),
            firstByte: firstByte,
            total: total,
            queued: context.queuedTime
        )
    }
}
