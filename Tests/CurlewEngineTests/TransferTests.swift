// Curlew — the hand-over between a task and the loop resumes exactly once, without sockets.

@testable import CurlewEngine
import HTTPTypes
import Testing

@Suite struct TransferTests {
    func makeTransfer() throws -> Transfer {
        Transfer(request: try PreparedRequest(TransportRequest(url: "http://127.0.0.1:1/"), urls: ParsedURLCache(capacity: 0)))
    }

    @Test func cancelledBeforeAttachResumesAtOnceWithCancellation() async throws {
        let transfer = try makeTransfer()
        #expect(transfer.markCancelled() == false)  // nothing for the loop to abort yet
        let attached = Locked<Bool?>(nil)
        let outcome = await withUnsafeContinuation { continuation in
            attached.withLock { $0 = transfer.attach(continuation) }
        }
        #expect(attached.withLock { $0 } == false)
        guard case .failure(let error) = outcome else { Issue.record("expected failure"); return }
        #expect(error.code == .cancelled)
    }

    @Test func finishResumesOnceAndLaterCallsDoNothing() async throws {
        let transfer = try makeTransfer()
        let outcome = await withUnsafeContinuation { continuation in
            #expect(transfer.attach(continuation))
            transfer.finish(.success(TransportResponse(status: .ok)))
            transfer.finish(.failure(TransportError(.curl, message: "second")))  // ignored
        }
        guard case .success(let response) = outcome else { Issue.record("expected success"); return }
        #expect(response.status == .ok)
        #expect(transfer.markCancelled() == false)  // already finished: nothing to abort
    }

    @Test func cancelAfterAttachAsksTheLoopToAbort() async throws {
        let transfer = try makeTransfer()
        let outcome = await withUnsafeContinuation { continuation in
            #expect(transfer.attach(continuation))
            #expect(transfer.markCancelled() == true)
            #expect(transfer.isCancelled)
            transfer.finish(.failure(TransportError(.cancelled, message: "aborted")))
        }
        guard case .failure(let error) = outcome else { Issue.record("expected failure"); return }
        #expect(error.code == .cancelled)
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

@Suite struct TimeoutClassificationTests {
    @Test(arguments: [
        ("Connection timed out after 301 milliseconds", TransportError.Timeout.connect),
        ("Connection timeout after 300 ms", .connect),
        ("Resolving timed out after 300 milliseconds", .connect),
        ("Failed to resolve host 'x.test' with timeout after 300 ms", .connect),
        ("Failed to connect to 127.0.0.1 port 9 after 300 ms: Timeout was reached", .connect),
        ("SSL connection timeout", .connect),
        ("Operation timed out after 300 milliseconds with 0 bytes received", .total),
        ("Operation too slow. Less than 1 bytes/sec transferred the last 1 seconds", .lowSpeed),
    ])
    func everyWordingOfLibcurlsTimeoutsIsClassified(text: String, expected: TransportError.Timeout) {
        #expect(ErrorMapping.whichTimeout(text, total: .seconds(60), connect: .seconds(10)) == expected)
    }

    @Test func aTotalTimeoutNoLongerThanTheConnectTimeoutIsTheOneThatExpired() {
        let text = "Connection timed out after 301 milliseconds"
        #expect(ErrorMapping.whichTimeout(text, total: .milliseconds(300), connect: .seconds(10)) == .total)
    }
}
