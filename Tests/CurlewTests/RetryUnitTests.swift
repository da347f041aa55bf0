// Curlew — the pure parts of retrying: Backoff and BackoffState, Retry-After parsing, the retry budget's
// buckets and keys, and which requests and failures RetryPolicy allows to be sent again.

@testable import Curlew
import CurlewEngine
import Foundation
import Testing

@Suite struct RetryUnitTests {
    // MARK: Backoff

    @Test func backoffBoundsDoubleFromBaseUpToTheCap() {
        let backoff = Backoff(base: .milliseconds(100), cap: .seconds(1))
        #expect(backoff.bound(afterFailures: 1) == .milliseconds(100))
        #expect(backoff.bound(afterFailures: 2) == .milliseconds(200))
        #expect(backoff.bound(afterFailures: 3) == .milliseconds(400))
        #expect(backoff.bound(afterFailures: 4) == .milliseconds(800))
        #expect(backoff.bound(afterFailures: 5) == .seconds(1))
        #expect(backoff.bound(afterFailures: 6) == .seconds(1))
        // Far past the cap, and past 2^62 doublings, without overflowing.
        #expect(backoff.bound(afterFailures: 1000) == .seconds(1))
        #expect(backoff.bound(afterFailures: Int.max) == .seconds(1))
        // Zero or fewer failures: the base.
        #expect(backoff.bound(afterFailures: 0) == .milliseconds(100))
        #expect(backoff.bound(afterFailures: -3) == .milliseconds(100))
    }

    @Test func backoffDefaultsAreThoseDocumented() {
        let backoff = Backoff.default
        #expect(backoff.base == .milliseconds(100))
        #expect(backoff.cap == .seconds(10))
        #expect(backoff.jitter == .full)
        #expect(backoff.resetAfter == .seconds(30))
        #expect(backoff.bound(afterFailures: 8) == .seconds(10))  // 100 ms × 128 = 12.8 s, capped
        #expect(backoff.bound(afterFailures: 7) == .milliseconds(6400))
    }

    @Test func backoffInitialiserClampsBaseAndCap() {
        let negative = Backoff(base: .milliseconds(-5), cap: .milliseconds(-1))
        #expect(negative.base == .zero)
        #expect(negative.cap == .zero)
        #expect(negative.bound(afterFailures: 10) == .zero)
        let capBelowBase = Backoff(base: .seconds(2), cap: .seconds(1))
        #expect(capBelowBase.cap == .seconds(2))
        #expect(capBelowBase.bound(afterFailures: 3) == .seconds(2))
        let zeroBase = Backoff(base: .zero, cap: .seconds(1))
        #expect(zeroBase.bound(afterFailures: 100) == .zero)
    }

    @Test func fullJitterScalesTheBoundByTheRandomDraw() {
        let backoff = Backoff(base: .milliseconds(100), cap: .seconds(1))
        #expect(backoff.delay(afterFailures: 1, random: 0) == .zero)
        #expect(backoff.delay(afterFailures: 1, random: 0.5) == .milliseconds(50))
        #expect(backoff.delay(afterFailures: 2, random: 0.5) == .milliseconds(100))
        #expect(backoff.delay(afterFailures: 3, random: 0.25) == .milliseconds(100))
        #expect(backoff.delay(afterFailures: 9, random: 0.5) == .milliseconds(500))
        // Just below 1: just below the bound, never at or above it.
        let high = backoff.delay(afterFailures: 2, random: 0.999_999)
        #expect(high < .milliseconds(200))
        #expect(high >= .milliseconds(199))
        // A random source outside 0..<1 is clamped to 0...1.
        #expect(backoff.delay(afterFailures: 2, random: -0.5) == .zero)
        #expect(backoff.delay(afterFailures: 2, random: 1.0) == .milliseconds(200))
        #expect(backoff.delay(afterFailures: 2, random: 7.5) == .milliseconds(200))
    }

    @Test func noJitterIsExactlyTheBoundWhateverTheDraw() {
        let backoff = Backoff(base: .milliseconds(100), cap: .milliseconds(400), jitter: .none)
        for random in [0.0, 0.3, 0.999] {
            #expect(
                (1...5).map { backoff.delay(afterFailures: $0, random: random) }
                    == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(400), .milliseconds(400)])
        }
    }

    // MARK: BackoffState

    @Test func backoffStateCountsConsecutiveFailures() {
        var state = BackoffState(Backoff(base: .milliseconds(100), cap: .seconds(10), jitter: .none))
        let t0 = ContinuousClock.now
        #expect(state.failures == 0)
        #expect(state.failed(at: t0, random: 0.5) == .milliseconds(100))
        #expect(state.failed(at: t0 + .seconds(1), random: 0.5) == .milliseconds(200))
        #expect(state.failed(at: t0 + .seconds(2), random: 0.5) == .milliseconds(400))
        #expect(state.failures == 3)
        // Failures without any success in between are never forgotten, however far apart.
        #expect(state.failed(at: t0 + .seconds(3600), random: 0.5) == .milliseconds(800))
        #expect(state.failures == 4)
    }

    @Test func backoffStateForgetsFailuresAfterAHealthyPeriod() {
        let backoff = Backoff(base: .milliseconds(100), cap: .seconds(10), jitter: .none, resetAfter: .seconds(30))
        let t0 = ContinuousClock.now
        var state = BackoffState(backoff)
        _ = state.failed(at: t0, random: 0)
        _ = state.failed(at: t0, random: 0)
        state.succeeded(at: t0 + .seconds(1))
        // A later success does not move the start of the healthy period.
        state.succeeded(at: t0 + .seconds(20))
        #expect(state.failed(at: t0 + .seconds(31), random: 0) == .milliseconds(100))
        #expect(state.failures == 1)

        var short = BackoffState(backoff)
        _ = short.failed(at: t0, random: 0)
        _ = short.failed(at: t0, random: 0)
        short.succeeded(at: t0 + .seconds(1))
        // 29.999 s healthy: not long enough.
        #expect(short.failed(at: t0 + .milliseconds(30_999), random: 0) == .milliseconds(400))
        #expect(short.failures == 3)
        // The failure ended the healthy period: a success, then exactly resetAfter, resets.
        short.succeeded(at: t0 + .seconds(40))
        #expect(short.failed(at: t0 + .seconds(70), random: 0) == .milliseconds(100))
        #expect(short.failures == 1)
    }

    @Test func backoffStateDrawsFullJitterFromTheRandomValue() {
        var state = BackoffState(Backoff(base: .milliseconds(100), cap: .seconds(1)))
        let t0 = ContinuousClock.now
        #expect(state.failed(at: t0, random: 0.5) == .milliseconds(50))
        #expect(state.failed(at: t0, random: 0.5) == .milliseconds(100))
        #expect(state.failed(at: t0, random: 0) == .zero)
    }

    // MARK: Retry-After

    /// TestClock's default wall-clock time: Tue, 14 Nov 2023 22:13:20 GMT.
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test(arguments: [
        ("0", Duration.zero), ("2", .seconds(2)), ("120", .seconds(120)), (" 7 ", .seconds(7)), ("\t3\t", .seconds(3)),
        ("0005", .seconds(5)), ("99999999999999999999999", .seconds(Int64.max)),
    ])
    func retryAfterSeconds(value: String, expected: Duration) {
        #expect(RetryAfter.delay(value, now: Self.now) == expected)
    }

    @Test(arguments: [
        // IMF-fixdate
        ("Tue, 14 Nov 2023 22:13:23 GMT", Duration.seconds(3)),
        ("Wed, 15 Nov 2023 22:13:20 GMT", .seconds(86_400)),
        ("Tue, 14 Nov 2023 22:13:20 GMT", .zero),
        ("Sun, 06 Nov 1994 08:49:37 GMT", .zero),  // long past
        // RFC 850
        ("Tuesday, 14-Nov-23 22:13:25 GMT", .seconds(5)),
        ("Sunday, 06-Nov-94 08:49:37 GMT", .zero),
        // asctime, with the space-padded day
        ("Tue Nov 14 22:13:30 2023", .seconds(10)),
        ("Sun Nov  6 08:49:37 1994", .zero),
        ("Fri Dec  1 00:00:00 2023", .seconds(1_388_800)),
    ])
    func retryAfterHTTPDates(value: String, expected: Duration) {
        #expect(RetryAfter.delay(value, now: Self.now) == expected)
    }

    @Test func httpDatesParseToTheExactInstant() {
        // RFC 9110's example in its three forms: 784111777 seconds after the epoch.
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: Self.now) == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: Self.now) == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994", now: Self.now) == expected)
        #expect(HTTPDate.parse("Tue, 14 Nov 2023 22:13:20 GMT", now: Self.now) == Self.now)
        // Month names in any case.
        #expect(HTTPDate.parse("Tue, 14 NOV 2023 22:13:20 GMT", now: Self.now) == Self.now)
        // Leap day.
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 00:00:00 GMT", now: Self.now) == Date(timeIntervalSince1970: 1_709_164_800))
    }

    @Test func rfc850TwoDigitYearsAreNeverMoreThanFiftyYearsAhead() {
        // now is 2023: 50 → 2050 (27 years ahead), 80 → 1980 (2080 would be 57 years ahead), 99 → 1999.
        func parsed(_ twoDigits: String) -> Date? {
            HTTPDate.parse("Monday, 01-Jan-\(twoDigits) 00:00:00 GMT", now: Self.now)
        }
        #expect(parsed("23") == Date(timeIntervalSince1970: 1_672_531_200))  // 2023-01-01
        #expect(parsed("50") == Date(timeIntervalSince1970: 2_524_608_000))  // 2050-01-01
        #expect(parsed("80") == Date(timeIntervalSince1970: 315_532_800))  // 1980-01-01
        #expect(parsed("99") == Date(timeIntervalSince1970: 915_148_800))  // 1999-01-01
        #expect(parsed("00") == Date(timeIntervalSince1970: 946_684_800))  // 2000-01-01
    }

    @Test(arguments: [
        "", "   ", "soon", "-1", "+5", "1.5", "2s", "5 5",
        "Tue, 14 Nov 2023 22:13:23 UTC",  // only GMT
        "Tue, 14 Nov 2023 22:13:23 gmt",
        "Tue, 14 Foo 2023 22:13:23 GMT",  // month
        "Tue, 32 Nov 2023 22:13:23 GMT",  // day
        "Tue, 00 Nov 2023 22:13:23 GMT",
        "Tue, 14 Nov 2023 24:00:00 GMT",  // hour
        "Tue, 14 Nov 2023 22:60:00 GMT",  // minute
        "Tue, 14 Nov 2023 22:13:61 GMT",  // second
        "Tue, 14 Nov 2023 22:13 GMT",  // time
        "Tue, 14 Nov 2023 22:13:23:01 GMT",
        "Tue, 14 Nov 23 22:13:23 GMT",  // IMF-fixdate needs four digits
        "Tue, 14 Nov 02023 22:13:23 GMT",
        "Tuesday, 14-Nov-2023 22:13:23 GMT",  // RFC 850 needs two
        "Tuesday, 14-Nov 22:13:23 GMT",
        "Tuesday, 14-Xyz-23 22:13:23 GMT",
        "Tue Nov 14 22:13:23 23",  // asctime needs four
        "Tue Nov xx 22:13:23 2023",
        "Tue, 14 Nov 2023 22:13:23 GMT extra",
    ])
    func retryAfterGarbageIsNil(value: String) {
        #expect(RetryAfter.delay(value, now: Self.now) == nil)
    }

    // MARK: RetryBudget

    @Test(arguments: [
        ("http://example.com/a/b?c#d", "http://example.com:80"),
        ("http://Example.COM", "http://example.com:80"),
        ("HTTP://example.com/", "http://example.com:80"),
        ("https://example.com/x", "https://example.com:443"),
        ("HTTPS://EXAMPLE.com:443/x", "https://example.com:443"),
        ("https://example.com:8443", "https://example.com:8443"),
        ("http://example.com:/x", "http://example.com:80"),
        ("http://example.com?q=1", "http://example.com:80"),
        ("http://example.com#frag", "http://example.com:80"),
        ("http://user:secret@example.com:8080/path", "http://example.com:8080"),
        ("http://a@b@example.com/", "http://example.com:80"),
        ("http://example.com/path@other.com", "http://example.com:80"),
        ("http://[::1]:8080/x", "http://[::1]:8080"),
        ("http://[::1]/x", "http://[::1]:80"),
        ("https://[FE80::1]/", "https://[fe80::1]:443"),
        ("http://127.0.0.1:54321/retry", "http://127.0.0.1:54321"),
        ("not a url", "not a url"),
    ])
    func budgetKeysNormaliseTheOrigin(url: String, expected: String) {
        #expect(RetryBudget.key(for: url) == expected)
    }

    @Test func budgetKeysMatchForTheSameOriginOnly() {
        #expect(RetryBudget.key(for: "http://a.test/x") == RetryBudget.key(for: "http://A.TEST:80/y?z"))
        #expect(RetryBudget.key(for: "http://a.test/") != RetryBudget.key(for: "https://a.test/"))
        #expect(RetryBudget.key(for: "http://a.test:8080/") != RetryBudget.key(for: "http://a.test:8081/"))
        #expect(RetryBudget.key(for: "http://a.test/") != RetryBudget.key(for: "http://b.test/"))
    }

    @Test func budgetDefaultsAndClamps() {
        let defaults = RetryBudget()
        #expect(defaults.capacity == 10)
        #expect(defaults.refillPerSecond == 1)
        #expect(defaults.depositPerSuccess == 0.1)
        let clamped = RetryBudget(capacity: -1, refillPerSecond: -2, depositPerSuccess: -3)
        #expect(clamped.capacity == 0)
        #expect(clamped.refillPerSecond == 0)
        #expect(clamped.depositPerSuccess == 0)
        #expect(clamped.withdraw(for: "http://a.test:80", at: .now) == false)
    }

    @Test func budgetWithdrawsUntilEmptyPerKey() {
        let budget = RetryBudget(capacity: 2, refillPerSecond: 0, depositPerSuccess: 0)
        let t0 = ContinuousClock.now
        let a = "http://a.test/x"
        let b = "http://b.test/x"
        #expect(budget.tokens(for: a, at: t0) == 2)
        #expect(budget.withdraw(for: RetryBudget.key(for: a), at: t0))
        #expect(budget.tokens(for: a, at: t0) == 1)
        #expect(budget.withdraw(for: RetryBudget.key(for: a), at: t0))
        #expect(budget.tokens(for: a, at: t0) == 0)
        #expect(budget.withdraw(for: RetryBudget.key(for: a), at: t0) == false)
        #expect(budget.tokens(for: a, at: t0 + .seconds(3600)) == 0)  // no refill
        // The same origin spelled differently shares the bucket; another origin has its own.
        #expect(budget.tokens(for: "http://A.TEST:80/other", at: t0) == 0)
        #expect(budget.tokens(for: b, at: t0) == 2)
        #expect(budget.withdraw(for: RetryBudget.key(for: b), at: t0))
        #expect(budget.tokens(for: b, at: t0) == 1)
    }

    @Test func budgetRefillsWithTimeUpToCapacity() {
        let budget = RetryBudget(capacity: 2, refillPerSecond: 1, depositPerSuccess: 0)
        let t0 = ContinuousClock.now
        let key = RetryBudget.key(for: "http://a.test/")
        #expect(budget.withdraw(for: key, at: t0))
        #expect(budget.withdraw(for: key, at: t0))
        #expect(budget.withdraw(for: key, at: t0) == false)
        #expect(budget.tokens(for: "http://a.test/", at: t0) == 0)
        #expect(budget.tokens(for: "http://a.test/", at: t0 + .milliseconds(500)) == 0.5)
        #expect(budget.tokens(for: "http://a.test/", at: t0 + .milliseconds(1500)) == 1.5)
        #expect(budget.tokens(for: "http://a.test/", at: t0 + .seconds(60)) == 2)
        // Half a token is not enough for a retry; one is.
        #expect(budget.withdraw(for: key, at: t0 + .milliseconds(500)) == false)
        #expect(budget.withdraw(for: key, at: t0 + .seconds(1)))
        #expect(budget.tokens(for: "http://a.test/", at: t0 + .seconds(1)) == 0)
        // An instant before the last update refills nothing.
        #expect(budget.tokens(for: "http://a.test/", at: t0) == 0)
    }

    @Test func budgetDepositsPerSuccessUpToCapacity() {
        let budget = RetryBudget(capacity: 2, refillPerSecond: 0, depositPerSuccess: 0.5)
        let t0 = ContinuousClock.now
        let url = "http://a.test/"
        let key = RetryBudget.key(for: url)
        // A key that never retried stays full.
        budget.deposit(forURL: url, at: t0)
        #expect(budget.tokens(for: url, at: t0) == 2)
        #expect(budget.withdraw(for: key, at: t0))
        #expect(budget.withdraw(for: key, at: t0))
        budget.deposit(forURL: url, at: t0)
        #expect(budget.tokens(for: url, at: t0) == 0.5)
        budget.deposit(forURL: url, at: t0)
        #expect(budget.tokens(for: url, at: t0) == 1)
        for _ in 0..<10 { budget.deposit(forURL: url, at: t0) }
        #expect(budget.tokens(for: url, at: t0) == 2)
    }

    // MARK: RetryPolicy

    @Test func policyDefaults() {
        let policy = RetryPolicy.default
        #expect(policy.maxAttempts == 3)
        #expect(policy.methods == [.get, .head, .options, .put, .delete, .trace])
        #expect(policy.optInField == HTTPField.Name("Idempotency-Key"))
        #expect(policy.statuses == [408, 429, 500, 502, 503, 504])
        #expect(policy.backoff == .default)
        #expect(policy.maxRetryAfter == .seconds(60))
        #expect(policy.totalTimeout == nil)
        #expect(RetryPolicy(maxAttempts: 0).maxAttempts == 1)
        #expect(RetryPolicy(maxAttempts: -4).maxAttempts == 1)
    }

    static func request(_ method: HTTPRequest.Method, key: Bool = false, body: TransportRequest.Body? = nil) -> TransportRequest {
        var request = TransportRequest(url: "http://a.test/", method: method, body: body)
        if key, let name = HTTPField.Name("Idempotency-Key") { request.headerFields[name] = "k-1" }
        return request
    }

    @Test func policyAllowsMethodsOptInsAndReplayableBodiesOnly() {
        let policy = RetryPolicy.default
        for method in [HTTPRequest.Method.get, .head, .options, .put, .delete, .trace] {
            #expect(policy.mayRetry(Self.request(method)), "\(method)")
        }
        #expect(!policy.mayRetry(Self.request(.post)))
        #expect(!policy.mayRetry(Self.request(.patch)))
        #expect(!policy.mayRetry(Self.request(.connect)))
        #expect(policy.mayRetry(Self.request(.post, key: true)))
        #expect(policy.mayRetry(Self.request(.patch, key: true)))
        // Bodies: bytes and replayable streams may be sent again, one-shot streams not even when opted in.
        #expect(policy.mayRetry(Self.request(.put, body: .string("x"))))
        #expect(policy.mayRetry(Self.request(.put, body: .stream(length: 1, replayable: true) { try await $0.write([1]) })))
        #expect(!policy.mayRetry(Self.request(.put, body: .stream(length: 1) { try await $0.write([1]) })))
        #expect(!policy.mayRetry(Self.request(.post, key: true, body: .stream(length: 1) { try await $0.write([1]) })))
        // Another opt-in field, or none.
        var custom = RetryPolicy.default
        custom.optInField = HTTPField.Name("X-Retry-OK")
        #expect(!custom.mayRetry(Self.request(.post, key: true)))
        var withField = Self.request(.post)
        if let name = HTTPField.Name("X-Retry-OK") { withField.headerFields[name] = "1" }
        #expect(custom.mayRetry(withField))
        custom.optInField = nil
        #expect(!custom.mayRetry(Self.request(.post, key: true)))
        #expect(custom.mayRetry(Self.request(.get)))
        // Methods chosen by the policy.
        let postToo = RetryPolicy(methods: [.post])
        #expect(postToo.mayRetry(Self.request(.post)))
        #expect(!postToo.mayRetry(Self.request(.get)))
    }

    static func failure(
        _ code: TransportError.Code, timeout: TransportError.Timeout? = nil, tls: TLSFailureReason? = nil,
        responded: Bool = false
    ) -> TransportError {
        var error = TransportError(code, message: "test", timeout: timeout)
        error.tlsReason = tls
        error.responseBytesReceived = responded
        return error
    }

    @Test func failuresThatProveTheRequestWasNotProcessed() {
        let policy = RetryPolicy.default
        let post = Self.request(.post, key: true)
        #expect(policy.retries(Self.failure(.dnsFailure), of: post))
        #expect(policy.retries(Self.failure(.cannotConnect), of: post))
        #expect(policy.retries(Self.failure(.timedOut, timeout: .connect), of: post))
        #expect(policy.retries(Self.failure(.tlsFailure, tls: .handshakeFailed), of: post))
        #expect(policy.retries(Self.failure(.http2ConnectionFailed), of: post))
        #expect(!policy.retries(Self.failure(.http2ConnectionFailed, responded: true), of: post))
        for timeout in [TransportError.Timeout.total, .idle, .lowSpeed] {
            #expect(!policy.retries(Self.failure(.timedOut, timeout: timeout), of: Self.request(.get)), "\(timeout)")
        }
        for reason in [TLSFailureReason.untrustedIssuer, .selfSigned, .hostnameMismatch, .expired, .pinMismatch] {
            #expect(!policy.retries(Self.failure(.tlsFailure, tls: reason), of: Self.request(.get)), "\(reason)")
        }
        for code in [TransportError.Code.cancelled, .streamReset, .invalidResponse, .bodyTooLarge, .sessionShutDown, .curl] {
            #expect(!policy.retries(Self.failure(code), of: Self.request(.get)), "\(code)")
        }
    }

    @Test func connectionsClosedBeforeAnyResponseByteOnlyForIdempotentOrOptedIn() {
        let policy = RetryPolicy(methods: RetryPolicy.idempotentMethods.union([.post]))
        for code in [TransportError.Code.connectionClosed, .connectionReset] {
            #expect(policy.retries(Self.failure(code), of: Self.request(.get)), "\(code)")
            #expect(policy.retries(Self.failure(code), of: Self.request(.put)), "\(code)")
            #expect(policy.retries(Self.failure(code), of: Self.request(.post, key: true)), "\(code)")
            // A method the policy retries on statuses is still not idempotent: the server may have
            // processed it.
            #expect(!policy.retries(Self.failure(code), of: Self.request(.post)), "\(code)")
            // Once a response byte arrived, never.
            #expect(!policy.retries(Self.failure(code, responded: true), of: Self.request(.get)), "\(code)")
            #expect(!policy.retries(Self.failure(code, responded: true), of: Self.request(.post, key: true)), "\(code)")
        }
    }
}
