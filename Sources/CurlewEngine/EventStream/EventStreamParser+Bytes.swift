// Curlew — the byte-level helpers of the event-stream parser: finding line ends and colons, the byte
// order mark, `retry` digits.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EventStreamParser {
    /// A `retry` value's milliseconds, clamped: `nil` unless it is one or more ASCII digits.
    static func reconnectionMilliseconds(_ value: UnsafeBufferPointer<UInt8>) -> Int? {
        if value.isEmpty { return nil }
        var milliseconds = 0
        for byte in value {
            let digit = byte &- 0x30
            if digit > 9 { return nil }
            // Stop accumulating once past the clamp: the value can only grow, and this never overflows.
            if milliseconds <= maximumReconnectionMilliseconds { milliseconds = milliseconds * 10 + Int(digit) }
        }
        return min(milliseconds, maximumReconnectionMilliseconds)
    }

    /// The byte order mark's bytes, EF BB BF.
    static func byteOrderMark(_ index: Int) -> UInt8 {
        switch index {
        case 0: 0xEF
        case 1: 0xBB
        default: 0xBF
        }
    }

    /// The first colon of a line: field names are short, so the first bytes are looked at one by one
    /// before a call to `memchr`.
    static func findColon(_ start: UnsafePointer<UInt8>, count: Int) -> UnsafePointer<UInt8>? {
        let head = min(count, 8)
        for index in 0..<head where start[index] == colon { return start + index }
        return findOptional(colon, from: start + head, to: start + count)
    }

    /// The first `byte` in `start..<end`, or `end`.
    static func find(_ byte: UInt8, from start: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>) -> UnsafePointer<UInt8> {
        findOptional(byte, from: start, to: end) ?? end
    }

    /// The first `byte` in `start..<end`, or `nil`.
    static func findOptional(_ byte: UInt8, from start: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>) -> UnsafePointer<UInt8>? {
        guard start < end, let found = memchr(start, Int32(byte), end - start) else { return nil }
        return UnsafePointer(found.assumingMemoryBound(to: UInt8.self))
    }
}
