// Curlew — turning a CURLcode and what the engine observed into a TransportError.

import CCurl
import CCurlShims
import HTTPTypes

/// Classifies a failed transfer from libcurl's code and the engine's own observations: whether the
/// connection was established (curl's connect and TLS times), whether the response head was complete,
/// whether its body was chunked, whether the socket reported an error (curl's `CURLINFO_OS_ERRNO`:
/// pooled handles always start from 0, see ``EasyHandlePool``), and the transfer's deadline.
///
/// No decision reads curl's error text; the text is only copied into the error, for people.
enum ErrorMapping {
    /// Codes newer than the floor's headers (see CCurlShims.h).
    static let unrecoverablePoll = CURLcode(UInt32(curlew_code_unrecoverable_poll))
    static let tooLarge = CURLcode(UInt32(curlew_code_too_large))
    static let echRequired = CURLcode(UInt32(curlew_code_ech_required))

    /// What the engine observed about a transfer that failed.
    struct Observation {
        var code: CURLcode
        /// The socket reported an error (`errno` != 0) during this transfer.
        var socketError: Bool
        /// The TCP connection was established (curl's connect time is set).
        var connected: Bool
        /// For https: the TLS handshake finished.
        var tlsEstablished: Bool
        var isHTTPS: Bool
        /// The final response head was complete.
        var headComplete: Bool
        /// The final head declared `Transfer-Encoding`.
        var chunked: Bool
        /// The transfer's total deadline had passed when it failed.
        var pastDeadline: Bool
        /// curl's low-speed check is on.
        var lowSpeedCheck: Bool
        /// Bytes of response heads received (0: not a byte of the response arrived).
        var headBytes: Int = 0
        /// This transfer opened its own connection (rather than reusing one).
        var openedConnection: Bool = false
        /// A client certificate was configured for this transfer.
        var presentedClientCertificate: Bool = false
        /// OpenSSL's verification result (`CURLINFO_SSL_VERIFYRESULT`); libcurl leaves it at 1 until
        /// the certificate has been checked.
        var verifyResult: Int = 1
        /// New connections libcurl made for this transfer (`CURLINFO_NUM_CONNECTS`): more than one when
        /// libcurl sent the request again itself, as it does for a stream the server refused.
        var connectionsMade: Int = 1
        /// The host answered this session before (its protocol is known).
        var hostAnsweredBefore: Bool = false
        /// The host's answers came over HTTP/2.
        var hostSpeaksHTTP2: Bool = false

        /// A failure right after the handshake can be the server refusing the client's certificate:
        /// unless the host has answered this session before without one (it does not require one).
        var mayBeCertificateRefusal: Bool {
            failedRightAfterHandshake && (presentedClientCertificate || !hostAnsweredBefore)
        }

        /// The failure came at the first read or write on the one HTTPS connection this transfer opened,
        /// after the handshake and before any response byte: where TLS 1.3 delivers a server's refusal
        /// of the client certificate. A transfer libcurl made more connections for was sent again by
        /// libcurl itself (HTTP/2 REFUSED_STREAM, up to 5 times), so its connections were accepted.
        var failedRightAfterHandshake: Bool {
            isHTTPS && openedConnection && tlsEstablished && headBytes == 0 && connectionsMade <= 1
        }
    }

    /// The error for a failed transfer.
    static func error(for code: CURLcode, context: TransferContext, configuration: SessionConfiguration) -> TransportError {
        // A failure the engine detected in a callback explains curl's resulting write error best.
        let responded = context.head.headBytes > 0
        if var failure = context.failure {
            failure.responseBytesReceived = responded
            return failure
        }
        let easy = context.handle.raw
        var osErrno = 0
        _ = curlew_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &osErrno)
        var connectTime: curl_off_t = 0
        _ = curlew_easy_getinfo_off(easy, CURLINFO_CONNECT_TIME_T, &connectTime)
        var tlsTime: curl_off_t = 0
        _ = curlew_easy_getinfo_off(easy, CURLINFO_APPCONNECT_TIME_T, &tlsTime)
        var verifyResult = 1
        _ = curlew_easy_getinfo_long(easy, CURLINFO_SSL_VERIFYRESULT, &verifyResult)
        var connectionsMade = 0
        _ = curlew_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connectionsMade)
        let request = context.exchange.request
        let observation = Observation(
            // A transfer that opened no socket ran over a connection that was already established.
            code: code, socketError: osErrno != 0, connected: connectTime > 0 || !context.openedSocket,
            tlsEstablished: tlsTime > 0 || !context.openedSocket, isHTTPS: request.poolKey.isHTTPS,
            headComplete: context.head.isComplete, chunked: context.head.isChunked,
            pastDeadline: context.exchange.deadline.map { MonotonicClock.now() >= $0 } ?? false,
            lowSpeedCheck: configuration.lowSpeedLimit > 0, headBytes: context.head.headBytes,
            openedConnection: context.openedSocket,
            presentedClientCertificate: request.request.options.clientIdentity != nil
                || (configuration.tls.clientIdentity != nil),
            verifyResult: verifyResult, connectionsMade: connectionsMade,
            hostAnsweredBefore: context.shard.thread.ledger.multiplexes(request.poolKey) != nil,
            hostSpeaksHTTP2: context.shard.thread.ledger.multiplexes(request.poolKey) == true)
        let (kind, timeout) = classify(observation)
        let text = context.handle.errorText ?? String(cString: curl_easy_strerror(code))
        var error = TransportError(
            kind, message: text, timeout: timeout, curlCode: Int(code.rawValue), url: request.request.url,
            method: request.request.method.rawValue)
        if kind == .tlsFailure { error.tlsReason = tlsReason(observation) }
        error.responseBytesReceived = responded
        return error
    }

    /// Why a TLS failure happened, from the code and OpenSSL's verification result (see the table in
    /// the Sessions article).
    static func tlsReason(_ seen: Observation) -> TLSFailureReason {
        switch seen.code {
        case CURLE_PEER_FAILED_VERIFICATION:
            switch seen.verifyResult {
            // X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT: the certificate is its own issuer.
            case 18: return .selfSigned
            // CERT_HAS_EXPIRED, CERT_NOT_YET_VALID.
            case 10: return .expired
            case 9: return .notYetValid
            // 1: OpenSSL's verification passed (libcurl's starting value stays), libcurl's own
            // host-name check failed.
            case 1, 0: return .hostnameMismatch
            // 2, 20, 21 (no issuer found), 19 (an untrusted root in the chain) and the rest.
            default: return .untrustedIssuer
            }
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .pinMismatch
        case CURLE_SSL_CERTPROBLEM, CURLE_BAD_FUNCTION_ARGUMENT:
            // From 8.16.0 a private key OpenSSL will not use (not the certificate's, a wrong password)
            // is CURLE_BAD_FUNCTION_ARGUMENT; before, CURLE_SSL_CERTPROBLEM.
            return .clientCertificateUnusable
        case CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CRL_BADFILE:
            return .trustStoreUnusable
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            // Only reached for the case `classify` routes here: a refusal right after the handshake.
            return .clientCertificateRejected
        case CURLE_SSL_CONNECT_ERROR where seen.presentedClientCertificate:
            // TLS 1.2: the server refuses the certificate inside the handshake.
            return .clientCertificateRejected
        default:
            return .handshakeFailed
        }
    }

    /// The code (and for timeouts, which timeout) for an observation.
    static func classify(_ seen: Observation) -> (TransportError.Code, TransportError.Timeout?) {
        switch seen.code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return (.dnsFailure, nil)
        case CURLE_COULDNT_CONNECT:
            return (.cannotConnect, nil)
        case CURLE_OPERATION_TIMEDOUT:
            // The engine ends transfers at their total deadline itself; curl's own total timeout is only a
            // backstop. What curl times out on its own is connecting (TCP and TLS) or the low-speed check.
            if seen.pastDeadline { return (.timedOut, .total) }
            if !seen.connected || (seen.isHTTPS && !seen.tlsEstablished) { return (.timedOut, .connect) }
            return (.timedOut, seen.lowSpeedCheck ? .lowSpeed : .total)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_USE_SSL_FAILED, CURLE_SSL_CLIENTCERT, Self.echRequired:
            return (.tlsFailure, nil)
        case CURLE_BAD_FUNCTION_ARGUMENT where seen.presentedClientCertificate && !seen.tlsEstablished:
            // libcurl 8.16.0 and later: the client's private key could not be used (see `tlsReason`).
            return (.tlsFailure, nil)
        case CURLE_FILESIZE_EXCEEDED:
            return (.bodyTooLarge, nil)
        case CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING:
            return (.connectionClosed, nil)
        case CURLE_RECV_ERROR where seen.mayBeCertificateRefusal && (!seen.socketError || seen.presentedClientCertificate),
            CURLE_SEND_ERROR where seen.mayBeCertificateRefusal && seen.presentedClientCertificate:
            // TLS 1.3 finishes the client's side of the handshake before the server has checked the
            // client certificate: its refusal (a TLS alert, or with a client certificate also an abrupt
            // close) arrives at the first read, before any response byte. Anything else there (a
            // stream refused on every connection libcurl made) is a reset, below.
            return (.tlsFailure, nil)
        case CURLE_OUT_OF_MEMORY where !seen.headComplete:
            // libcurl before 8.6.0 refuses a single header line over its 100 KiB cap this way.
            return (.headersTooLarge, nil)
        case Self.tooLarge where !seen.headComplete || seen.chunked:
            // libcurl 8.6.0 and later: a header line or all heads over its caps (100 KiB, 300 KiB), or
            // trailer lines, which Curlew counts as part of the head.
            return (.headersTooLarge, nil)
        case CURLE_RECV_ERROR where !seen.socketError && seen.headBytes == 0 && seen.hostSpeaksHTTP2:
            // An HTTP/2 connection that failed without a socket error before any answer: libcurl 8.0 to
            // 8.12 reports a framing error (or a session nghttp2 closed itself) this way, 8.13 and later
            // as CURLE_HTTP2.
            return (.http2ConnectionFailed, nil)
        case CURLE_RECV_ERROR where !seen.socketError && !seen.headComplete && seen.headBytes > 0:
            // No socket error while reading heads: libcurl's own cap on all heads (300 KiB) was hit.
            return (.headersTooLarge, nil)
        case CURLE_RECV_ERROR where !seen.socketError && seen.chunked:
            // No socket error in a chunked body: the chunks were malformed.
            return (.invalidResponse, nil)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            return (.connectionReset, nil)
        case CURLE_BAD_CONTENT_ENCODING:
            return (.badContentEncoding, nil)
        case CURLE_URL_MALFORMAT:
            return (.invalidURL, nil)
        case CURLE_UNSUPPORTED_PROTOCOL:
            // Every URL was checked to be http(s) before it was queued, so this is the response's
            // protocol: libcurl reports an HTTP/0.9 reply or an unparsable status line this way.
            return (.invalidResponse, nil)
        case CURLE_HTTP2_STREAM:
            return (.streamReset, nil)
        case CURLE_HTTP2:
            return (.http2ConnectionFailed, nil)
        case CURLE_WEIRD_SERVER_REPLY:
            return (.invalidResponse, nil)
        case Self.unrecoverablePoll:
            // libcurl 7.84.0 and later, when poll() fails inside curl: not a network failure and nothing
            // a retry would fix, so it stays a plain curl error, with curl's code.
            return (.curl, nil)
        default:
            return (.curl, nil)
        }
    }
}
