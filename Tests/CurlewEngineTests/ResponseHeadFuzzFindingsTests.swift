// Curlew — what comparing the response-head parser with Python's h11 over the fuzz corpus found
// (Fuzz/Scripts/h11_compare.py), each checked against real libcurl: the body's framing follows libcurl's
// reading of Transfer-Encoding, a line that starts with CR is refused, obs-fold is unfolded.

@testable import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// A parser fed `lines` one at a time, as curl's header callback delivers them; the last event.
private func parse(_ lines: [String]) -> (ResponseHeadParser, ResponseHeadParser.Event) {
    var parser = ResponseHeadParser(maxHeadBytes: 4096)
    var event = ResponseHeadParser.Event.more
    for line in lines {
        event = Array(line.utf8).withUnsafeBytes { parser.consume($0) }
        if event != .more { break }
    }
    return (parser, event)
}

@Suite struct ResponseHeadFuzzFindingsTests {
    /// libcurl frames a body as chunks when any coding of any `Transfer-Encoding` is `chunked`, and
    /// otherwise reads it to the connection's end, ignoring `Content-Length` (RFC 9112 §6.3). The parser
    /// took any `Transfer-Encoding` for chunked, and kept the length: a streamed body (which the engine
    /// unframes itself) came out different from the one libcurl read.
    @Test(arguments: [
        ("chunked", true),
        ("  ChUnKeD  ", true),
        ("gzip, chunked", true),
        ("chunked, gzip", true),
        (",chunked,", true),
        ("identity", false),
        ("", false),
        ("xchunked", false),
        ("chunked;q=1", false),
        ("chunked x", false),
    ])
    func transferEncodingFramesTheBodyAsLibcurlDoes(value: String, chunked: Bool) {
        let (parser, event) = parse(["HTTP/1.1 200 OK\r\n", "Transfer-Encoding: \(value)\r\n", "Content-Length: 3\r\n", "\r\n"])
        #expect(event == .complete)
        #expect(parser.isChunked == chunked)
        #expect(parser.contentLength == nil)
        #expect(parser.fields[.contentLength] == "3")
        #expect(parser.fields[.transferEncoding] == value.trimmingCharacters(in: .whitespaces))
    }

    @Test func chunkedInASecondTransferEncodingFieldCounts() {
        let (parser, event) = parse([
            "HTTP/1.1 200 OK\r\n", "Content-Length: 3\r\n", "Transfer-Encoding: gzip\r\n", "transfer-encoding: chunked\r\n", "\r\n",
        ])
        #expect(event == .complete)
        #expect(parser.isChunked)
        #expect(parser.contentLength == nil)
    }

    /// The framing of an interim head is not the final head's; `Transfer-Encoding :` (a space before the
    /// colon) is no `Transfer-Encoding` to libcurl either.
    @Test func onlyTheFinalHeadsTransferEncodingCounts() {
        let (parser, event) = parse([
            "HTTP/1.1 103 Early Hints\r\n", "Transfer-Encoding: chunked\r\n", "\r\n",
            "HTTP/1.1 200 OK\r\n", "Transfer-Encoding : chunked\r\n", "Content-Length: 5\r\n", "\r\n",
        ])
        #expect(event == .complete)
        #expect(!parser.isChunked)
        #expect(parser.contentLength == 5)
        #expect(parser.fields.map(\.name.rawName) == ["Content-Length"])
    }

    /// libcurl takes a line that starts with CR for the end of the head and hands the rest of the head to
    /// the body; the parser kept waiting for the end, and the transfer failed as a closed connection.
    @Test func aHeaderLineThatStartsWithCarriageReturnIsRefused() {
        let (_, event) = parse(["HTTP/1.1 200 OK\r\n", "\rX-A: b\r\n", "Content-Length: 2\r\n", "\r\n"])
        #expect(event == .failure(.invalidResponse, "the response has a header line that starts with a carriage return"))
        // A line of CRs alone is the end of the head, for libcurl too.
        let (parser, end) = parse(["HTTP/1.1 200 OK\r\n", "X-A: b\r\n", "\r\r\n"])
        #expect(end == .complete)
        #expect(parser.fields[HTTPField.Name("X-A")!] == "b")
    }

    /// libcurl 7.88 hands a folded line's continuation over as a line of its own; it was dropped, where a
    /// user agent must replace the fold with a space (RFC 9112 §5.2), as h11 and libcurl 8.23 do.
    @Test func obsFoldIsUnfolded() {
        let (parser, event) = parse([
            "HTTP/1.1 200 OK\r\n", " X-First: dropped, nothing to continue\r\n", "X-A: a\r\n", " b\r\n", "\t c: d \r\n",
            "Bad Name: x\r\n", " dropped with its field\r\n", "X-Empty:\r\n", " e\r\n", "X-B: f\r\n", " \u{01}g\r\n", "\r\n",
        ])
        #expect(event == .complete)
        let fields = parser.fields
        #expect(fields.map(\.name.rawName) == ["X-A", "X-Empty", "X-B"])
        #expect(fields.map(\.value) == ["a b c: d", "e", "f g"])
        for field in fields { #expect(HTTPField.isValidValue(field.value)) }
    }

    /// A folded `Transfer-Encoding` is unfolded in the fields, but framing stays libcurl 7.88's, which
    /// reads the first line only (libcurl 8.23 unfolds before the callback, and the parser sees `chunked`).
    @Test func aFoldedTransferEncodingIsFramedFromItsFirstLine() {
        let (parser, event) = parse(["HTTP/1.1 200 OK\r\n", "Transfer-Encoding:\r\n", " chunked\r\n", "\r\n"])
        #expect(event == .complete)
        #expect(parser.fields[.transferEncoding] == "chunked")
        #expect(!parser.isChunked)
        #expect(parser.contentLength == nil)
    }

    // MARK: Through libcurl

    /// A streamed body is unframed by the engine: with `Transfer-Encoding: identity` it is the bytes up to
    /// the connection's end, as libcurl reads them (it came out empty: the body was taken for chunks, and
    /// `0\r\n\r\n` for the last one). Beside a `Content-Length`, libcurl 7.88 reads to the end and libcurl
    /// 8.14 stops at the length; the engine ends where libcurl does.
    @Test(arguments: [
        ("Transfer-Encoding: identity\r\n", "0\r\n\r\nabc"),
        ("Transfer-Encoding: identity\r\nContent-Length: 3\r\n", "abcdef"),
        ("Content-Length: 3\r\nTransfer-Encoding:\r\n", "abcdef"),
    ])
    func aBodyThatIsNotChunkedIsReadToTheEnd(fields: String, body: String) async throws {
        let reply = Array("HTTP/1.1 200 OK\r\n\(fields)\r\n\(body)".utf8)
        try await withServerAndSession(handler: { _ in .raw(reply, after: .close) }) { server, session in
            let (streamed, length) = try await session.perform(TransportRequest(url: server.url("/s"))) { head, body in
                (String(decoding: try await body.collect(upTo: 100), as: UTF8.self), head.contentLength)
            }
            #expect(streamed == body || (fields.contains("Content-Length: 3") && streamed == String(body.prefix(3))))
            #expect(length == nil)
        }
    }

    @Test func aStreamedChunkedBodyIsStillUnframed() async throws {
        let reply = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".utf8)
        try await withServerAndSession(handler: { _ in .raw(reply, after: .close) }) { server, session in
            let streamed = try await session.perform(TransportRequest(url: server.url("/c"))) { _, body in
                String(decoding: try await body.collect(upTo: 100), as: UTF8.self)
            }
            #expect(streamed == "hello")
        }
    }

    @Test func aHeaderLineThatStartsWithCarriageReturnIsAnInvalidResponse() async throws {
        let reply = Array("HTTP/1.1 200 OK\r\n\rX-A: b\r\nContent-Length: 2\r\n\r\nhi".utf8)
        try await withServerAndSession(handler: { _ in .raw(reply, after: .close) }) { server, session in
            let buffered = await transportError { try await session.execute(TransportRequest(url: server.url("/b"))) }
            #expect(buffered?.code == .invalidResponse)
            #expect(buffered?.message == "the response has a header line that starts with a carriage return")
            let streamed = await transportError {
                try await session.perform(TransportRequest(url: server.url("/s"))) { _, body in try await body.collect(upTo: 100) }
            }
            #expect(streamed?.code == .invalidResponse)
        }
    }

    @Test func foldedFieldsArriveUnfolded() async throws {
        let reply = Array("HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nhi".utf8)
        try await withServerAndSession(handler: { _ in .raw(reply, after: .close) }) { server, session in
            let response = try await session.execute(TransportRequest(url: server.url("/f")))
            #expect(response.headerFields[HTTPField.Name("X-A")!] == "a b")
            #expect(response.headerFields.map(\.name.rawName) == ["X-A", "Content-Length"])
            #expect(response.body == Data("hi".utf8))
        }
    }
}
