// Curlew — the hand-over between a task and the loop resumes exactly once, without sockets.

@testable import CurlewEngine
import CCurl
import Logging
import HTTPTypes
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct TransferTests {
    /// An exchange on a loop that is never started: its commands are queued and never run.
    func makeExchange(streamed: Bool = false) throws -> Exchange {
        Exchange(
            request: try PreparedRequest(TransportRequest(url: "http://127.0.0.1:1/"), urls: ParsedURLCache(capacity: 0)),
            deadline: nil, loop: try EventLoop(configuration: SessionConfiguration(), logger: Logger(label: "test")),
            response: streamed ? .streamed(floor: 1024, cap: 1024, chunkLimit: 1024) : .collected, body: .fixed(.none))
    }

    @Test func cancelledBeforeSubmissionResumesAtOnceWithCancellation() async throws {
        let exchange = try makeExchange()
        exchange.abort()  // nothing for the loop to abort yet
        #expect(exchange.isCancelled)
        let outcome = await exchange.submitAndWait()
        guard case .failure(let error) = outcome else { Issue.record("expected failure"); return }
        #expect(error.code == .cancelled)
        #expect(exchange.loop.inbox.withLock { $0.commands.count } == 0)
        discard(exchange)
    }

    @Test func finishResumesOnceAndLaterCallsDoNothing() async throws {
        let exchange = try makeExchange()
        exchange.finish(.success(TransportResponse(status: .ok)))
        exchange.finish(.failure(TransportError(.curl, message: "second")))  // ignored
        guard case .success(let response) = exchange.takeOutcome() else { Issue.record("expected success"); return }
        #expect(response.status == .ok)
        exchange.abort()  // already finished: nothing to abort
        #expect(exchange.loop.inbox.withLock { $0.commands.count } == 0)
        discard(exchange)
    }

    @Test func cancelAfterSubmissionAsksTheLoopToAbort() async throws {
        let exchange = try makeExchange(streamed: true)
        exchange.submitStreamed()
        #expect(exchange.register(TransferID(slot: 0, generation: 1)) == false)
        exchange.abort()
        #expect(exchange.isCancelled)
        let commands = exchange.loop.inbox.withLock { $0.commands }
        #expect(commands.count == 2)
        guard case .cancel = commands.last else { Issue.record("expected a cancel command"); return }
        exchange.finish(.failure(TransportError(.cancelled, message: "aborted")))
        #expect(throws: TransportError.self) { _ = try exchange.pollHead() }
        discard(exchange)
    }

    /// Empties the never-started loop's inbox, whose `.submit` holds the exchange that holds the loop (a
    /// running loop takes its commands at once), and closes the loop's descriptors.
    private func discard(_ exchange: Exchange) {
        exchange.loop.inbox.withLock { $0.commands = [] }
        close(exchange.loop.epollFD)
        close(exchange.loop.wakeFD)
    }

    @Test func headParserKeepsFinalHeadOnly() {
        var parser = ResponseHeadParser(maxHeadBytes: 1024)
        func feed(_ line: String) -> ResponseHeadParser.Event {
            Array(line.utf8).withUnsafeBytes { parser.consume($0) }
        }
        #expect(feed("HTTP/1.1 100 Continue\r\n") == .more)
        #expect(feed("\r\n") == .more)
        #expect(feed("HTTP/1.1 200 OK\r\n") == .more)
        #expect(feed("Content-Length:  5 \r\n") == .more)
        #expect(feed("X-A: 1\r\n") == .more)
        #expect(feed("\r\n") == .complete)
        #expect(feed("X-Trailer: ignored\r\n") == .more)
        #expect(parser.statusCode == 200)
        #expect(parser.contentLength == 5)
        #expect(parser.fields.count == 2)
        #expect(parser.fields[HTTPField.Name("X-A")!] == "1")
    }

    @Test func headParserRejectsConflictingLengthsAndOversizedHeads() {
        var parser = ResponseHeadParser(maxHeadBytes: 1024)
        func feed(_ line: String) -> ResponseHeadParser.Event {
            Array(line.utf8).withUnsafeBytes { parser.consume($0) }
        }
        #expect(feed("HTTP/1.1 200 OK\r\n") == .more)
        #expect(feed("Content-Length: 5\r\n") == .more)
        guard case .failure(let code, _) = feed("Content-Length: 6\r\n") else {
            Issue.record("expected failure"); return
        }
        #expect(code == .invalidResponse)
        var small = ResponseHeadParser(maxHeadBytes: 20)
        let result = Array("HTTP/1.1 200 OK\r\nX-Long: 0123456789\r\n".utf8).withUnsafeBytes { small.consume($0) }
        guard case .failure(let tooLarge, _) = result else { Issue.record("expected failure"); return }
        #expect(tooLarge == .headersTooLarge)
    }

    @Test func headParserKeepsTheServersSpellingOfKnownAndOtherNames() {
        var parser = ResponseHeadParser(maxHeadBytes: 4096)
        func feed(_ line: String) -> ResponseHeadParser.Event {
            Array(line.utf8).withUnsafeBytes { parser.consume($0) }
        }
        #expect(feed("HTTP/1.1 200 OK\r\n") == .more)
        #expect(feed("Content-Type: application/json\r\n") == .more)  // known, canonical case
        #expect(feed("content-encoding: gzip\r\n") == .more)  // known, lowercase
        #expect(feed("CONTENT-LENGTH: 7\r\n") == .more)  // not in the table: general path
        #expect(feed("X-Custom-Thing:\tv\u{00E9}\r\n") == .more)  // non-ASCII value: lenient path
        #expect(feed("\r\n") == .complete)
        #expect(parser.fields.map(\.name.rawName) == ["Content-Type", "content-encoding", "CONTENT-LENGTH", "X-Custom-Thing"])
        #expect(parser.fields[.contentType] == "application/json")
        #expect(parser.fields[.contentEncoding] == "gzip")
        #expect(parser.hasContentEncoding)
        #expect(parser.contentLength == 7)
        #expect(parser.fields[HTTPField.Name("x-custom-thing")!] == "v\u{00E9}")
    }

    /// Found by fuzzing: swift-http-types' lenient value repairs CR, LF and NUL only, so a value with
    /// another control character came out as a field its own `isValidValue` refuses.
    @Test func controlCharactersInValuesBecomeSpacesAndEveryValueIsValid() {
        var parser = ResponseHeadParser(maxHeadBytes: 4096)
        func feed(_ bytes: [UInt8]) -> ResponseHeadParser.Event {
            bytes.withUnsafeBytes { parser.consume($0) }
        }
        #expect(feed(Array("HTTP/2 204\r\n".utf8)) == .more)
        #expect(feed(Array("Set-Cookie: a".utf8) + [0xC8] + Array("b\r".utf8) + [0x1C] + Array("s\r\n".utf8)) == .more)
        #expect(feed(Array("X-Edges: ".utf8) + [0x1C, 0x61, 0x7F, 0x62, 0x01] + Array("\r\n".utf8)) == .more)
        #expect(feed(Array("X-Nothing: ".utf8) + [0x1C, 0x7F] + Array("\r\n".utf8)) == .more)
        #expect(feed(Array("\r\n".utf8)) == .complete)
        let fields = parser.fields
        #expect(fields[.setCookie] == "a\u{FFFD}b  s")
        #expect(fields[HTTPField.Name("x-edges")!] == "a b")
        #expect(fields[HTTPField.Name("x-nothing")!] == "")
        for field in fields { #expect(HTTPField.isValidValue(field.value), "\(field.name): \(field.value.debugDescription)") }
    }
}

@Suite struct ParsedURLCacheTests {
    @Test func aURLIsParsedOnceAndSharedUntilTheCacheFills() throws {
        let cache = ParsedURLCache(capacity: 2)
        let first = try cache.parsed("http://127.0.0.1:8080/a").get()
        let again = try cache.parsed("http://127.0.0.1:8080/a").get()
        #expect(first === again)
        #expect(cache.count == 1)
        _ = try cache.parsed("http://127.0.0.1:8080/b").get()
        #expect(cache.count == 2)
        // Full: starts over with the new URL only; the old parsed URL stays valid for its holders.
        _ = try cache.parsed("http://127.0.0.1:8080/c").get()
        #expect(cache.count == 1)
        #expect(try cache.parsed("http://127.0.0.1:8080/a").get() !== first)
    }

    @Test func theLastURLFoundIsAnsweredFirstAndOthersStillFromTheirOwnEntries() throws {
        let cache = ParsedURLCache(capacity: 8)
        let a = try cache.parsed("http://127.0.0.1:8080/a").get()
        let b = try cache.parsed("http://127.0.0.1:8080/b").get()
        #expect(a !== b)
        // Alternating: each answer is its own URL's, whichever was found last.
        for _ in 0..<3 {
            #expect(try cache.parsed("http://127.0.0.1:8080/a").get() === a)
            #expect(try cache.parsed("http://127.0.0.1:8080/b").get() === b)
        }
        // An equal string with storage of its own is the same URL.
        let built = ["http://127.0.0.1:8080", "b"].joined(separator: "/")
        #expect(try cache.parsed(built).get() === b)
        #expect(a.normalized.map { String(cString: $0) } == "http://127.0.0.1:8080/a")
        #expect(b.normalized.map { String(cString: $0) } == "http://127.0.0.1:8080/b")
        #expect(cache.count == 2)
    }

    @Test func onlyHTTPURLsAreTakenForRequestsWhateverTheCacheHolds() throws {
        for capacity in [0, 8] {
            let cache = ParsedURLCache(capacity: capacity)
            // A redirect's target is parsed whatever its scheme; a request to it is still refused.
            let ftp = try cache.parsed("ftp://127.0.0.1/file").get()
            #expect(ftp.poolKey.scheme == "ftp")
            #expect(cache.parsedHTTP("ftp://127.0.0.1/file") == nil)
            #expect(cache.parsedHTTP("mailto:someone@example.com") == nil)
            let upper = try #require(cache.parsedHTTP("HTTP://127.0.0.1:8080/x")).get()
            #expect(upper.poolKey.scheme == "http")
            let again = try #require(cache.parsedHTTP("HTTP://127.0.0.1:8080/x")).get()
            #expect((again === upper) == (capacity > 0))
            #expect(cache.count == (capacity > 0 ? 2 : 0))
        }
    }

    @Test func refusedURLsAreNotCachedAndZeroCapacityCachesNothing() {
        let cache = ParsedURLCache(capacity: 8)
        guard case .failure(.refused(let reason)) = cache.parsed("http://exa mple.com/") else {
            Issue.record("expected libcurl to refuse the URL"); return
        }
        #expect(!reason.isEmpty)
        #expect(cache.count == 0)
        let off = ParsedURLCache(capacity: 0)
        _ = off.parsed("http://127.0.0.1/")
        #expect(off.count == 0)
    }
}

@Suite struct ErrorClassificationTests {
    /// An observation of a transfer that connected, got no head, and had no socket error.
    static func seen(
        _ code: CURLcode, socketError: Bool = false, connected: Bool = true, tls: Bool = true, https: Bool = false,
        headComplete: Bool = false, chunked: Bool = false, pastDeadline: Bool = false, lowSpeed: Bool = false,
        headBytes: Int = 0, opened: Bool = false, clientCertificate: Bool = false, verify: Int = 1, connections: Int = 1,
        answeredBefore: Bool = false, http2: Bool = false
    ) -> ErrorMapping.Observation {
        ErrorMapping.Observation(
            code: code, socketError: socketError, connected: connected, tlsEstablished: tls, isHTTPS: https,
            headComplete: headComplete, chunked: chunked, pastDeadline: pastDeadline, lowSpeedCheck: lowSpeed,
            headBytes: headBytes, openedConnection: opened, presentedClientCertificate: clientCertificate,
            verifyResult: verify, connectionsMade: connections, hostAnsweredBefore: answeredBefore, hostSpeaksHTTP2: http2)
    }

    @Test(arguments: [
        ("not connected yet", seen(CURLE_OPERATION_TIMEDOUT, connected: false), TransportError.Timeout.connect),
        ("TCP up, TLS handshake unfinished", seen(CURLE_OPERATION_TIMEDOUT, tls: false, https: true), .connect),
        ("connected, low-speed check on", seen(CURLE_OPERATION_TIMEDOUT, lowSpeed: true), .lowSpeed),
        ("curl's backstop after the deadline", seen(CURLE_OPERATION_TIMEDOUT, connected: false, pastDeadline: true), .total),
        ("connected, no low-speed check", seen(CURLE_OPERATION_TIMEDOUT), .total),
    ])
    func timeoutsAreToldApartByWhatWasObserved(_ what: String, _ observation: ErrorMapping.Observation, _ expected: TransportError.Timeout) {
        let (code, timeout) = ErrorMapping.classify(observation)
        #expect(code == .timedOut, "\(what)")
        #expect(timeout == expected, "\(what)")
    }

    @Test(arguments: [
        ("a line over libcurl's 100 KiB cap", seen(CURLE_OUT_OF_MEMORY), TransportError.Code.headersTooLarge),
        ("out of memory in the body", seen(CURLE_OUT_OF_MEMORY, headComplete: true), .curl),
        ("libcurl's 300 KiB cap on all heads", seen(CURLE_RECV_ERROR, headBytes: 250_000), .headersTooLarge),
        ("closed before any head byte", seen(CURLE_RECV_ERROR), .connectionReset),
        ("reset while reading the head", seen(CURLE_RECV_ERROR, socketError: true), .connectionReset),
        ("malformed chunks", seen(CURLE_RECV_ERROR, headComplete: true, chunked: true), .invalidResponse),
        ("reset in a chunked body", seen(CURLE_RECV_ERROR, socketError: true, headComplete: true, chunked: true), .connectionReset),
        ("reset in a sized body", seen(CURLE_RECV_ERROR, socketError: true, headComplete: true), .connectionReset),
        ("send failure", seen(CURLE_SEND_ERROR, socketError: true), .connectionReset),
        ("HTTP/0.9 reply", seen(CURLE_UNSUPPORTED_PROTOCOL), .invalidResponse),
        ("closed mid-body", seen(CURLE_PARTIAL_FILE, headComplete: true), .connectionClosed),
        ("closed before a reply", seen(CURLE_GOT_NOTHING), .connectionClosed),
        ("refused", seen(CURLE_COULDNT_CONNECT, connected: false), .cannotConnect),
        ("unknown host", seen(CURLE_COULDNT_RESOLVE_HOST, connected: false), .dnsFailure),
        ("bad gzip", seen(CURLE_BAD_CONTENT_ENCODING, headComplete: true), .badContentEncoding),
        ("untrusted certificate", seen(CURLE_PEER_FAILED_VERIFICATION, tls: false, https: true), .tlsFailure),
        // Codes libcurl added after 7.88, and codes that moved.
        ("8.6+: a line over the 100 KiB cap", seen(ErrorMapping.tooLarge), .headersTooLarge),
        ("8.6+: trailers over the cap", seen(ErrorMapping.tooLarge, headComplete: true, chunked: true), .headersTooLarge),
        ("8.6+: too large, in a sized body", seen(ErrorMapping.tooLarge, headComplete: true), .curl),
        ("7.84+: poll() failed inside curl", seen(ErrorMapping.unrecoverablePoll), .curl),
        ("8.8+: ECH required", seen(ErrorMapping.echRequired, tls: false, https: true), .tlsFailure),
        ("8.16+: a client key OpenSSL will not use", seen(CURLE_BAD_FUNCTION_ARGUMENT, tls: false, https: true, clientCertificate: true), .tlsFailure),
        ("a bad argument without a client certificate", seen(CURLE_BAD_FUNCTION_ARGUMENT, https: true), .curl),
        ("8.0-8.12: HTTP/2 framing error, new connection", seen(CURLE_RECV_ERROR, https: true, opened: true, verify: 0, answeredBefore: true, http2: true), .http2ConnectionFailed),
        ("8.0-8.12: HTTP/2 framing error, kept connection", seen(CURLE_RECV_ERROR, https: true, answeredBefore: true, http2: true), .http2ConnectionFailed),
        ("8.13+: HTTP/2 framing error", seen(CURLE_HTTP2, https: true, opened: true, answeredBefore: true, http2: true), .http2ConnectionFailed),
        ("7.x: HTTP/2 framing error", seen(CURLE_GOT_NOTHING, https: true, opened: true, answeredBefore: true, http2: true), .connectionClosed),
        ("HTTP/1.1 host closed before any byte", seen(CURLE_RECV_ERROR, https: true, answeredBefore: true), .connectionReset),
        ("HTTP/2 host reset mid-head", seen(CURLE_RECV_ERROR, socketError: true, https: true, headBytes: 40, answeredBefore: true, http2: true), .connectionReset),
    ])
    func failuresAreClassifiedByCodeAndObservation(
        _ what: String, _ observation: ErrorMapping.Observation, _ expected: TransportError.Code
    ) {
        let (code, timeout) = ErrorMapping.classify(observation)
        #expect(code == expected, "\(what)")
        #expect(timeout == nil, "\(what)")
    }
}

@Suite struct TLSFailureClassificationTests {
    typealias Seen = ErrorClassificationTests

    @Test(arguments: [
        ("self-signed leaf", Seen.seen(CURLE_PEER_FAILED_VERIFICATION, tls: false, https: true, verify: 18), TLSFailureReason.selfSigned),
        ("unknown issuer", Seen.seen(CURLE_PEER_FAILED_VERIFICATION, tls: false, https: true, verify: 20), .untrustedIssuer),
        ("untrusted root in the chain", Seen.seen(CURLE_PEER_FAILED_VERIFICATION, tls: false, https: true, verify: 19), .untrustedIssuer),
        ("expired", Seen.seen(CURLE_PEER_FAILED_VERIFICATION, tls: false, https: true, verify: 10), .expired),
        ("not yet valid", Seen.seen(CURLE_PEER_FAILED_VERIFICATION, tls: false, https: true, verify: 9), .notYetValid),
        ("host name", Seen.seen(CURLE_PEER_FAILED_VERIFICATION, tls: false, https: true, verify: 1), .hostnameMismatch),
        ("pin", Seen.seen(CURLE_SSL_PINNEDPUBKEYNOTMATCH, https: true, verify: 0), .pinMismatch),
        ("bad client key", Seen.seen(CURLE_SSL_CERTPROBLEM, tls: false, https: true, clientCertificate: true), .clientCertificateUnusable),
        ("bad client key, 8.16+", Seen.seen(CURLE_BAD_FUNCTION_ARGUMENT, tls: false, https: true, clientCertificate: true), .clientCertificateUnusable),
        ("ECH required", Seen.seen(ErrorMapping.echRequired, tls: false, https: true), .handshakeFailed),
        ("bad CA file", Seen.seen(CURLE_SSL_CACERT_BADFILE, tls: false, https: true), .trustStoreUnusable),
        ("TLS 1.2 refusal", Seen.seen(CURLE_SSL_CONNECT_ERROR, tls: false, https: true, opened: true, clientCertificate: true), .clientCertificateRejected),
        ("version mismatch", Seen.seen(CURLE_SSL_CONNECT_ERROR, tls: false, https: true, opened: true), .handshakeFailed),
        ("TLS 1.3 refusal", Seen.seen(CURLE_RECV_ERROR, https: true, opened: true, verify: 0), .clientCertificateRejected),
        ("TLS 1.3 refusal of a certificate, host answered before", Seen.seen(CURLE_RECV_ERROR, https: true, opened: true, clientCertificate: true, verify: 0, answeredBefore: true), .clientCertificateRejected),
        ("TLS 1.3 refusal, abrupt close", Seen.seen(CURLE_SEND_ERROR, socketError: true, https: true, opened: true, clientCertificate: true, verify: 0), .clientCertificateRejected),
    ])
    func reasonsComeFromCodeVerifyResultAndObservation(
        _ what: String, _ observation: ErrorMapping.Observation, _ expected: TLSFailureReason
    ) {
        let (code, _) = ErrorMapping.classify(observation)
        #expect(code == .tlsFailure, "\(what)")
        #expect(ErrorMapping.tlsReason(observation) == expected, "\(what)")
    }

    @Test func aReadErrorOnAReusedConnectionIsNotATLSRefusal() {
        let reused = Seen.seen(CURLE_RECV_ERROR, socketError: true, https: true, opened: false, clientCertificate: true)
        #expect(ErrorMapping.classify(reused).0 == .connectionReset)
        let midResponse = Seen.seen(CURLE_RECV_ERROR, socketError: true, https: true, headBytes: 120, opened: true, clientCertificate: true)
        #expect(ErrorMapping.classify(midResponse).0 == .connectionReset)
    }

    /// A host that has answered this session without a client certificate does not require one: a failure
    /// right after a new connection's handshake there is not a refused certificate.
    @Test func aHostThatAnsweredWithoutACertificateDoesNotRefuseOne() {
        let http1 = Seen.seen(CURLE_RECV_ERROR, https: true, opened: true, verify: 0, answeredBefore: true)
        #expect(ErrorMapping.classify(http1).0 == .connectionReset)
        let http2 = Seen.seen(CURLE_RECV_ERROR, https: true, opened: true, verify: 0, answeredBefore: true, http2: true)
        #expect(ErrorMapping.classify(http2).0 == .http2ConnectionFailed)
        let firstContact = Seen.seen(CURLE_RECV_ERROR, https: true, opened: true, verify: 0)
        #expect(ErrorMapping.classify(firstContact).0 == .tlsFailure)
    }

    /// libcurl sends a request whose stream was refused again itself, on new connections: when the last
    /// one is refused too, the failure looks like a TLS 1.3 refusal but for the connections made.
    @Test func aReadErrorAfterLibcurlsOwnRetriesIsNotATLSRefusal() {
        let refused = Seen.seen(CURLE_RECV_ERROR, https: true, opened: true, verify: 0, connections: 6)
        #expect(ErrorMapping.classify(refused).0 == .connectionReset)
        let withCertificate = Seen.seen(CURLE_RECV_ERROR, https: true, opened: true, clientCertificate: true, verify: 0, connections: 2)
        #expect(ErrorMapping.classify(withCertificate).0 == .connectionReset)
        let once = Seen.seen(CURLE_RECV_ERROR, https: true, opened: true, verify: 0, connections: 1)
        #expect(ErrorMapping.classify(once).0 == .tlsFailure)
    }
}
