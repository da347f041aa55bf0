// Curlew — turning a CURLcode (and what the callbacks saw) into a TransportError.

import CCurl
import HTTPTypes

enum ErrorMapping {
    static func error(for code: CURLcode, context: TransferContext, configuration: SessionConfiguration) -> TransportError {
        // A failure the engine detected in a callback explains curl's resulting write error best.
        if let failure = context.failure { return failure }
        let request = context.transfer.request.request
        let curlText = context.handle.errorText ?? String(cString: curl_easy_strerror(code))
        func make(_ kind: TransportError.Code, _ message: String, timeout: TransportError.Timeout? = nil) -> TransportError {
            TransportError(
                kind, message: message, timeout: timeout, curlCode: Int(code.rawValue), url: request.url,
                method: request.method.rawValue)
        }
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return make(.dnsFailure, curlText)
        case CURLE_COULDNT_CONNECT:
            return make(.cannotConnect, curlText)
        case CURLE_OPERATION_TIMEDOUT:
            let total = request.timeout ?? configuration.totalTimeout
            return make(.timedOut, curlText, timeout: whichTimeout(curlText, total: total, connect: configuration.connectTimeout))
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_USE_SSL_FAILED, CURLE_SSL_CLIENTCERT:
            return make(.tlsFailure, curlText)
        case CURLE_FILESIZE_EXCEEDED:
            return make(.bodyTooLarge, curlText)
        case CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING:
            return make(.connectionClosed, curlText)
        case CURLE_RECV_ERROR where curlText.contains("chunk"):
            // libcurl 7.88 reports malformed chunked encoding as a receive error.
            return make(.invalidResponse, curlText)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            return make(.connectionReset, curlText)
        case CURLE_BAD_CONTENT_ENCODING:
            return make(.badContentEncoding, curlText)
        case CURLE_URL_MALFORMAT:
            return make(.invalidURL, curlText)
        case CURLE_UNSUPPORTED_PROTOCOL:
            // Every URL was checked to be http(s) before it was queued, so this is the response's
            // protocol: libcurl 7.88 reports an HTTP/0.9 reply or an unparsable status line this way.
            return make(.invalidResponse, curlText)
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return make(.invalidResponse, curlText)
        default:
            return make(.curl, curlText)
        }
    }

    /// curl reports every timeout as CURLE_OPERATION_TIMEDOUT; its message says in which phase. During
    /// connecting curl waits for the sooner of the two deadlines, so a total timeout no longer than the
    /// connect timeout is the one that expired.
    static func whichTimeout(_ text: String, total: Duration?, connect: Duration) -> TransportError.Timeout {
        if text.hasPrefix("Operation too slow") { return .lowSpeed }
        // libcurl 7.88 words a connect-phase timeout several ways depending on where it notices it:
        // "Connection timed out after N milliseconds" (multi), "Connection timeout after N ms" (happy
        // eyeballs), "Resolving timed out", "Failed to resolve host ... with timeout", "Failed to
        // connect ...", "SSL connection timeout".
        let connecting =
            text.hasPrefix("Connection timed out") || text.hasPrefix("Connection timeout")
            || text.hasPrefix("Resolving timed out") || text.hasPrefix("Failed to resolve")
            || text.hasPrefix("Failed to connect") || text.hasPrefix("SSL connection timeout")
        guard connecting else { return .total }
        if let total, total <= connect { return .total }
        return .connect
    }
}
