// Curlew — a response head as received, turned into HTTPFields only when someone asks.

import HTTPTypes

/// The field lines of a response head, kept as bytes until ``fields`` is first read.
///
/// Most callers never look at most responses' header fields, and building `HTTPFields` (a String and
/// a validation pass per name and value) was the largest cost the engine added per request. The loop
/// thread therefore only copies the lines; they are parsed on the reading task's thread, once, and
/// the result is kept.
final class ReceivedHead: Sendable {
    /// `name:value\n` per field, values already trimmed. Unambiguous: a name holds no `:` (it ends at
    /// the first one) and no line holds `\n` (curl splits lines there).
    private let lines: [UInt8]
    private let parsed = Locked<HTTPFields?>(nil)

    init(lines: [UInt8]) {
        self.lines = lines
    }

    /// The fields in the order received. A line whose name is not an HTTP token is left out.
    var fields: HTTPFields {
        parsed.withLock { cached in
            if let cached { return cached }
            let fields = Self.parse(lines)
            cached = fields
            return fields
        }
    }

    private static func parse(_ lines: [UInt8]) -> HTTPFields {
        var fields = HTTPFields()
        lines.withUnsafeBytes { bytes in
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                if let colon = line.firstIndex(of: UInt8(ascii: ":")),
                    let name = name(UnsafeRawBufferPointer(rebasing: line[..<colon]))
                {
                    let value = UnsafeRawBufferPointer(rebasing: line[(colon + 1)...])
                    if isPrintableASCII(value) {
                        // The usual case: one String, no repair pass.
                        fields.append(HTTPField(name: name, value: String(decoding: value, as: UTF8.self)))
                    } else {
                        fields.append(HTTPField(name: name, lenientValue: value))
                    }
                }
                start = end + 1
            }
        }
        return fields
    }

    private static func name(_ bytes: UnsafeRawBufferPointer) -> HTTPField.Name? {
        if let (known, _) = KnownFieldNames.lookup(bytes) { return known }
        return HTTPField.Name(String(decoding: bytes, as: UTF8.self))
    }

    /// Whether every byte is a visible ASCII character, a space or a tab.
    private static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for byte in bytes where (byte < 0x20 && byte != 0x09) || byte > 0x7E {
            return false
        }
        return true
    }
}
