// Curlew — collecting the header lines curl hands over, with the engine's checks.

import HTTPTypes

/// Collects the head of the final response from curl's header callback, one line at a time.
///
/// Interim (1xx) heads are discarded; trailers after the body are ignored. The parser enforces the
/// head-size limit and rejects two different `Content-Length` values, which libcurl 7.88 accepts.
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
    private(set) var statusCode = 0
    private(set) var contentLength: Int?
    private(set) var hasContentEncoding = false
    private(set) var isComplete = false
    private var headBytes = 0
    let maxHeadBytes: Int

    init(maxHeadBytes: Int) {
        self.maxHeadBytes = maxHeadBytes
    }

    mutating func consume(_ line: UnsafeRawBufferPointer) -> Event {
        if isComplete { return .more }  // trailers
        headBytes += line.count
        guard headBytes <= maxHeadBytes else {
            return .failure(.headersTooLarge, "the response head exceeds the limit of \(maxHeadBytes) bytes")
        }
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        if end == 0 { return endOfHead() }
        let text = UnsafeRawBufferPointer(rebasing: line[0..<end])
        if Self.isStatusLine(text) { return statusLine(text) }
        return fieldLine(text)
    }

    /// Whether the line starts with `HTTP/`.
    private static func isStatusLine(_ text: UnsafeRawBufferPointer) -> Bool {
        text.count >= 5 && text[0] == UInt8(ascii: "H") && text[1] == UInt8(ascii: "T") && text[2] == UInt8(ascii: "T")
            && text[3] == UInt8(ascii: "P") && text[4] == UInt8(ascii: "/")
    }

    private mutating func statusLine(_ text: UnsafeRawBufferPointer) -> Event {
        // A new status line starts a new head (after a 1xx response, or a redirect when following).
        lines.removeAll(keepingCapacity: true)
        if lines.capacity == 0 { lines.reserveCapacity(512) }
        contentLength = nil
        hasContentEncoding = false
        statusCode = 0
        guard let space = text.firstIndex(of: 0x20) else { return .more }
        var code = 0
        var digits = 0
        var index = space + 1
        while index < text.count, digits < 3, (0x30...0x39).contains(text[index]) {
            code = code * 10 + Int(text[index] - 0x30)
            digits += 1
            index += 1
        }
        statusCode = digits == 3 ? code : 0
        return .more
    }

    private mutating func endOfHead() -> Event {
        if (100..<200).contains(statusCode), statusCode != 101 {
            headBytes = 0
            return .more
        }
        isComplete = true
        return .complete
    }

    private mutating func fieldLine(_ text: UnsafeRawBufferPointer) -> Event {
        // Only the two names the engine acts on are looked at here (both start with C, which skips
        // most lines at once); the line is kept as it came and split into name and value when read.
        if text.count >= 15, text[0] | 0x20 == UInt8(ascii: "c"), let colon = text.firstIndex(of: UInt8(ascii: ":")) {
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
        }
        lines.append(contentsOf: text)
        lines.append(UInt8(ascii: "\n"))
        return .more
    }

    /// `bytes` without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
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
