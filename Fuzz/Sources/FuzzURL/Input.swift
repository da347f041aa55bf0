// FuzzURL's input: NUL-separated text fields and a small grammar of parameter trees.

@testable import Curlew

/// The bytes of one input, read front to back; reading past the end gives zeros and empty fields.
struct Input {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    mutating func byte() -> UInt8 {
        bytes.popFirst() ?? 0
    }

    /// The text up to the next NUL (dropped) or the end, as a Swift string (invalid UTF-8 replaced).
    mutating func field() -> String {
        let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
        let text = String(decoding: bytes[..<end], as: UTF8.self)
        bytes = end < bytes.endIndex ? bytes[(end + 1)...] : bytes[end...]
        return text
    }

    /// A length byte, then that many bytes (fewer at the end) as text.
    mutating func shortString() -> String {
        let count = min(Int(byte()), bytes.count)
        let text = String(decoding: bytes.prefix(count), as: UTF8.self)
        bytes = bytes.dropFirst(count)
        return text
    }

    private mutating func word() -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(byte()) << UInt64(shift) }
        return value
    }

    /// A parameter value: tag byte (mod 8) string, int, double, true, false, null, array, object.
    mutating func value(depth: Int) -> JSONValue {
        let tag = byte() % 8
        switch tag {
        case 1: return .int(Int(truncatingIfNeeded: word()))
        case 2: return .double(Double(bitPattern: word()))
        case 3: return .bool(true)
        case 4: return .bool(false)
        case 5: return .null
        case 6 where depth < 4:
            let count = Int(byte() % 5)
            return .array((0..<count).map { _ in value(depth: depth + 1) })
        case 7 where depth < 4:
            return .object(object(count: Int(byte() % 5), depth: depth + 1))
        default: return .string(shortString())
        }
    }

    /// `count` entries: a key, then its value (a repeated key: the last wins, as a dictionary literal).
    mutating func object(count: Int, depth: Int) -> [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        for _ in 0..<count {
            let key = shortString()
            object[key] = value(depth: depth)
        }
        return object
    }

    /// Top-level parameters: a count byte (mod 8), then the entries.
    mutating func parameters() -> [String: JSONValue] {
        object(count: Int(byte() % 8), depth: 0)
    }
}
