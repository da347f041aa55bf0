// Curlew — collecting the header lines curl hands over, with the engine's checks.

import HTTPTypes

#if canImport(Glibc)
import Glibc
#endif

/// Collects the head of the final response from curl's header callback, one line at a time.
///
/// Interim (1xx) heads are discarded; trailer fields after the body are kept apart from the head. The parser enforces the
/// head-size limit over every head of the response (interim ones included, so endless 1xx heads cannot
/// evade it), requires each head to start with a strict status line (`HTTP/` in that case, a version,
/// a three-digit code: libcurl accepts `Http/1.1`), and rejects two different `Content-Length` values,
/// which libcurl accepts, and a head line that starts with CR (libcurl ends the head there, and would take
/// the rest of the head for the body). The framing it reports is libcurl's: chunked when a
/// `Transfer-Encoding` lists `chunked`, and no `Content-Length` when any `Transfer-Encoding` is present.
struct ResponseHeadParser {
    enum Event: Equatable {
        /// Keep feeding lines.
        case more
        /// The final head is complete.
        case complete
        /// The response must be refused.
        case failure(TransportError.Code, String)
    }

    /// The final head's field lines (see ``ReceivedHead``), in the order received.
    private var lines: [UInt8] = []
    /// Trailer field lines, in the same form.
    private var trailerLines: [UInt8] = []
    /// Whether trailer lines arrived. Stored: read through the transfer's context for every response, a
    /// computed property would copy the whole parser.
    private(set) var hasTrailers = false
    private(set) var statusCode = 0
    /// The final head's `Content-Length`; nil when it has none, or has a `Transfer-Encoding` (see above).
    private(set) var contentLength: Int?
    private(set) var hasContentEncoding = false
    /// Whether a `Transfer-Encoding` of the final head lists `chunked` (a body framed by chunks), as libcurl
    /// decides it: any coding of any such field, whatever its case and place in the list.
    private(set) var isChunked = false
    /// Whether the final head has a `Transfer-Encoding` field, whatever its value: libcurl then ignores
    /// `Content-Length` and reads a body that is not chunked up to the connection's end (RFC 9112 §6.3).
    private var hasTransferEncoding = false
    /// Whether the final head carries a `Location` field.
    private(set) var hasLocation = false
    /// Whether the response came over HTTP/2 (libcurl writes its status line as `HTTP/2 NNN`).
    private(set) var isHTTP2 = false
    private(set) var isComplete = false
    /// Bytes of every head received so far (status lines and fields of interim and final heads).
    private(set) var headBytes = 0
    /// Whether the next line must be a status line (the start of a head).
    private var expectsStatusLine = true
    let maxHeadBytes: Int

    init(maxHeadBytes: Int) {
        self.maxHeadBytes = maxHeadBytes
    }

    mutating func consume(_ line: UnsafeRawBufferPointer) -> Event {
        if isComplete { return trailerLine(line) }
        headBytes += line.count
        guard headBytes <= maxHeadBytes else {
            return .failure(.headersTooLarge, "the response head exceeds the limit of \(maxHeadBytes) bytes")
        }
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        if expectsStatusLine {
            guard end > 0 else { return .more }  // blank lines before a head are tolerated, as servers send them
            return statusLine(UnsafeRawBufferPointer(rebasing: line[0..<end]))
        }
        if end == 0 { return endOfHead() }
        if line[0] == 0x0D {
            // libcurl takes a line that starts with CR for the empty line that ends the head, and what
            // follows for the body: this head's end cannot be known.
            return .failure(.invalidResponse, "the response has a header line that starts with a carriage return")
        }
        return fieldLine(UnsafeRawBufferPointer(rebasing: line[0..<end]))
    }

    /// Starts a head: `HTTP/` (exactly that case), the version (`1.1`, `1.0`, `2`, `3`), a space and a
    /// three-digit status code followed by a space or the end of the line.
    private mutating func statusLine(_ text: UnsafeRawBufferPointer) -> Event {
        lines.removeAll(keepingCapacity: true)
        if lines.capacity == 0 { lines.reserveCapacity(512) }
        contentLength = nil
        hasContentEncoding = false
        isChunked = false
        hasTransferEncoding = false
        hasLocation = false
        guard let code = Self.statusCode(text) else {
            let shown = String(decoding: text.prefix(64), as: UTF8.self)
            return .failure(.invalidResponse, "the response does not start with a valid status line: \(String(reflecting: shown))")
        }
        statusCode = code
        isHTTP2 = text[5] == UInt8(ascii: "2")
        expectsStatusLine = false
        return .more
    }

    /// The status code of a strict status line, or nil.
    static func statusCode(_ text: UnsafeRawBufferPointer) -> Int? {
        let digit = 0x30...0x39 as ClosedRange<UInt8>
        guard text.count >= 10, text[0] == UInt8(ascii: "H"), text[1] == UInt8(ascii: "T"), text[2] == UInt8(ascii: "T"),
            text[3] == UInt8(ascii: "P"), text[4] == UInt8(ascii: "/")
        else { return nil }
        var index = 5
        // Major version digit, then an optional ".minor".
        guard index < text.count, digit.contains(text[index]) else { return nil }
        index += 1
        if index < text.count, text[index] == UInt8(ascii: ".") {
            index += 1
            guard index < text.count, digit.contains(text[index]) else { return nil }
            index += 1
        }
        guard index < text.count, text[index] == 0x20 else { return nil }
        index += 1
        guard index + 3 <= text.count, digit.contains(text[index]), digit.contains(text[index + 1]),
            digit.contains(text[index + 2])
        else { return nil }
        let code = Int(text[index] - 0x30) * 100 + Int(text[index + 1] - 0x30) * 10 + Int(text[index + 2] - 0x30)
        index += 3
        guard index == text.count || text[index] == 0x20 else { return nil }
        return code
    }

    private mutating func endOfHead() -> Event {
        if (100..<200).contains(statusCode), statusCode != 101 {
            // An interim head: another head follows, and its bytes still count against the limit.
            expectsStatusLine = true
            return .more
        }
        isComplete = true
        if hasTransferEncoding { contentLength = nil }
        return .complete
    }

    private mutating func fieldLine(_ text: UnsafeRawBufferPointer) -> Event {
        // Only the two names the engine acts on are looked at here (both start with C, which skips
        // most lines at once); the line is kept as it came and split into name and value when read.
        if text.count >= 15, text[0] | 0x20 == UInt8(ascii: "c"), let colon = Self.colon(in: text) {
            let name = UnsafeRawBufferPointer(rebasing: text[0..<colon])
            if ASCIICase.equals(name, "content-length") {
                guard let length = Self.decimal(Self.trimmed(UnsafeRawBufferPointer(rebasing: text[(colon + 1)...]))) else {
                    return .failure(.invalidResponse, "the response has an invalid Content-Length")
                }
                if let contentLength, contentLength != length {
                    return .failure(
                        .invalidResponse, "the response has two different Content-Length values (\(contentLength) and \(length))")
                }
                contentLength = length
            } else if ASCIICase.equals(name, "content-encoding") {
                hasContentEncoding = true
            }
        } else if text.count >= 9, text[0] | 0x20 == UInt8(ascii: "l"), ASCIICase.hasPrefix(text, "location:") {
            hasLocation = true
        } else if text.count >= 18, text[0] | 0x20 == UInt8(ascii: "t"), let colon = Self.colon(in: text),
            ASCIICase.equals(UnsafeRawBufferPointer(rebasing: text[0..<colon]), "transfer-encoding")
        {
            hasTransferEncoding = true
            if !isChunked { isChunked = Self.listsChunked(UnsafeRawBufferPointer(rebasing: text[(colon + 1)...])) }
        }
        // As typed bytes: the raw buffer went through the generic element-by-element append.
        text.withMemoryRebound(to: UInt8.self) { lines.append(contentsOf: $0) }
        lines.append(UInt8(ascii: "\n"))
        return .more
    }

    /// The offset of the first colon in `text` (memchr: the generic search showed in profiles).
    private static func colon(in text: UnsafeRawBufferPointer) -> Int? {
        guard let base = text.baseAddress, let found = memchr(base, 0x3A, text.count) else { return nil }
        return UnsafeRawPointer(found) - base
    }

    /// Whether the comma-separated list `value` has an element `chunked` (any case, spaces and tabs around
    /// it): libcurl's test, which takes `gzip, chunked` and `chunked, gzip` alike, and not `chunked;x=1`.
    static func listsChunked(_ value: UnsafeRawBufferPointer) -> Bool {
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count, value[end] != UInt8(ascii: ",") { end += 1 }
            if ASCIICase.equals(trimmed(UnsafeRawBufferPointer(rebasing: value[start..<end])), "chunked") { return true }
            start = end + 1
        }
        return false
    }

    /// `bytes` without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// A line after the final head: a trailer field (HTTP/1.1 chunked, HTTP/2), counted against the head
    /// limit like the head's own lines.
    private mutating func trailerLine(_ line: UnsafeRawBufferPointer) -> Event {
        headBytes += line.count
        guard headBytes <= maxHeadBytes else {
            return .failure(.headersTooLarge, "the response head and trailers exceed the limit of \(maxHeadBytes) bytes")
        }
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        guard end > 0 else { return .more }
        trailerLines.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[0..<end]))
        trailerLines.append(UInt8(ascii: "\n"))
        hasTrailers = true
        return .more
    }

    /// The trailer fields received after the body, or nil when none came.
    func makeTrailers() -> HTTPFields? {
        trailerLines.isEmpty ? nil : ReceivedHead(lines: trailerLines).fields
    }

    /// The head received so far, for the response.
    func makeHead() -> ReceivedHead { ReceivedHead(lines: lines) }

    /// The final head's fields (parsed now; the engine hands ``makeHead()`` to the response instead).
    var fields: HTTPFields { makeHead().fields }

    private static func decimal(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value = 0
        for byte in bytes {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }
}
