// Curlew — a response head as received, turned into HTTPFields only when someone asks.

import HTTPTypes

/// The field lines of a response head, kept as received until ``fields`` is first read.
///
/// Most callers never look at most responses' header fields, and building `HTTPFields` (a String and
/// a validation pass per name and value) was the largest cost the engine added per request. The loop
/// thread therefore only copies the lines; they are parsed on the reading task's thread, once, and
/// the result is kept.
struct ReceivedHead: Sendable {
    private struct State {
        /// Each field line as received (without its CRLF), followed by `\n`. Unambiguous: curl splits
        /// lines at `\n`, so no line holds one.
        let lines: [UInt8]
        var fields: HTTPFields?
    }

    // One allocation holds the lines, the parsed fields and the lock.
    private let state: Locked<State>

    init(lines: [UInt8]) {
        state = Locked(State(lines: lines))
    }

    /// The fields in the order received. A line without a colon, or whose name is not an HTTP token,
    /// is left out. A line that starts with a space or a tab continues the value of the field before it,
    /// after one space: a user agent must unfold obs-fold (RFC 9112 §5.2), which libcurl 7.88 hands over
    /// as a line of its own (8.23 joins it first). Such lines used to be dropped (found comparing with h11).
    var fields: HTTPFields {
        state.withLock { state in
            if let fields = state.fields { return fields }
            let fields = Self.parse(state.lines)
            state.fields = fields
            return fields
        }
    }

    private static func parse(_ lines: [UInt8]) -> HTTPFields {
        var fields = HTTPFields()
        lines.withUnsafeBytes { bytes in
            // Whether the last line became a field, which a continuation line then extends.
            var continues = false
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                if let first = line.first, first == 0x20 || first == 0x09 {
                    if continues { unfold(ResponseHeadParser.trimmed(line), into: &fields) }
                } else if let colon = line.firstIndex(of: UInt8(ascii: ":")),
                    let name = name(UnsafeRawBufferPointer(rebasing: line[..<colon]))
                {
                    fields.append(field(name, ResponseHeadParser.trimmed(UnsafeRawBufferPointer(rebasing: line[(colon + 1)...]))))
                    continues = true
                } else {
                    continues = false
                }
                start = end + 1
            }
        }
        return fields
    }

    private static func field(_ name: HTTPField.Name, _ value: UnsafeRawBufferPointer) -> HTTPField {
        if isPrintableASCII(value) {
            // The usual case: one String, no repair pass.
            return HTTPField(name: name, value: String(decoding: value, as: UTF8.self))
        }
        if let repaired = repaired(value) { return HTTPField(name: name, lenientValue: repaired) }
        return HTTPField(name: name, value: "")
    }

    /// Appends the continuation `more`, made a value as any other, to the last field's value after a space.
    private static func unfold(_ more: UnsafeRawBufferPointer, into fields: inout HTTPFields) {
        guard let last = fields.indices.last else { return }
        let previous = fields[last]
        let addition = field(previous.name, more).withUnsafeBytesOfValue { Array($0) }
        guard !addition.isEmpty else { return }
        var value = previous.withUnsafeBytesOfValue { Array($0) }
        if !value.isEmpty { value.append(0x20) }
        value.append(contentsOf: addition)
        fields[last] = value.withUnsafeBytes { field(previous.name, $0) }
    }

    private static func name(_ bytes: UnsafeRawBufferPointer) -> HTTPField.Name? {
        if let known = KnownFieldNames.name(for: bytes) { return known }
        return HTTPField.Name(String(decoding: bytes, as: UTF8.self))
    }

    /// `bytes` with every control character but the tab (CR, LF and NUL, and the others RFC 9110 does
    /// not allow in a value either, DEL included) turned into a space, and trimmed again; nil when nothing
    /// is left. swift-http-types' lenient value repairs only CR, LF and NUL, which left a field whose value
    /// its own `isValidValue` refuses (found by fuzzing).
    private static func repaired(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        var repaired = bytes.map { byte -> UInt8 in (byte < 0x20 && byte != 0x09) || byte == 0x7F ? 0x20 : byte }
        while let last = repaired.last, last == 0x20 || last == 0x09 { repaired.removeLast() }
        guard let first = repaired.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return nil }
        repaired.removeFirst(first)
        return repaired
    }

    /// Whether every byte is a visible ASCII character, a space or a tab.
    private static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for byte in bytes where (byte < 0x20 && byte != 0x09) || byte > 0x7E {
            return false
        }
        return true
    }
}
