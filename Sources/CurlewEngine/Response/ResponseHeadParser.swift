// Curlew — turning the header lines curl hands over into HTTPFields, with the engine's checks.

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

    /// The final head's fields, in the order received.
    private(set) var fields = HTTPFields()
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
        fields = HTTPFields()
        fields.reserveCapacity(12)
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
        guard let colon = text.firstIndex(of: UInt8(ascii: ":")) else { return .more }
        let nameBytes = UnsafeRawBufferPointer(rebasing: text[0..<colon])
        let name: HTTPField.Name
        let role: KnownFieldNames.Role
        if let known = KnownFieldNames.lookup(nameBytes) {
            (name, role) = known
        } else {
            // A name that is not a token cannot be represented in HTTPFields; such a line is dropped.
            guard let parsed = HTTPField.Name(String(decoding: nameBytes, as: UTF8.self)) else { return .more }
            name = parsed
            role = KnownFieldNames.role(of: parsed)
        }
        var start = colon + 1
        var end = text.count
        while start < end, text[start] == 0x20 || text[start] == 0x09 { start += 1 }
        while end > start, text[end - 1] == 0x20 || text[end - 1] == 0x09 { end -= 1 }
        let value = UnsafeRawBufferPointer(rebasing: text[start..<end])
        if role == .contentLength {
            guard let length = Self.decimal(value) else {
                return .failure(.invalidResponse, "the response has an invalid Content-Length")
            }
            if let contentLength, contentLength != length {
                return .failure(
                    .invalidResponse, "the response has two different Content-Length values (\(contentLength) and \(length))")
            }
            contentLength = length
        } else if role == .contentEncoding {
            hasContentEncoding = true
        }
        if Self.isPrintableASCII(value) {
            // The usual case: one String, no repair pass.
            append(HTTPField(name: name, value: String(decoding: value, as: UTF8.self)))
        } else {
            append(HTTPField(name: name, lenientValue: value))
        }
        return .more
    }

    /// Appends one field. (Measured: this is the cheapest way in. Building an array first and converting
    /// it, or calling `replaceSubrange` directly, reach HTTPFields' unspecialised generic code.)
    private mutating func append(_ field: HTTPField) {
        fields.append(field)
    }

    /// Whether every byte is a visible ASCII character, a space or a tab.
    private static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for byte in bytes where (byte < 0x20 && byte != 0x09) || byte > 0x7E {
            return false
        }
        return true
    }

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
