// Curlew — JSONDecoder's `convertFromSnakeCase` key conversion, rule for rule.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The key conversion of `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase`.
enum SnakeCaseKeys {
    /// Converts `key` as JSONDecoder does: leading and trailing underscores are kept; the rest is
    /// split at underscores (empty parts dropped); a single part is kept as it is; otherwise the
    /// first part is lowercased and the others capitalized (Foundation's `capitalized`), then joined.
    static func convert(_ key: String) -> String {
        guard let first = key.firstIndex(where: { $0 != "_" }) else { return key }
        var last = key.index(before: key.endIndex)
        while last > first, key[last] == "_" { key.formIndex(before: &last) }
        let core = key[first...last]
        let parts = core.split(separator: "_")
        guard parts.count > 1 else { return key }
        var converted = String(key[..<first])
        converted += parts[0].lowercased()
        for part in parts.dropFirst() { converted += part.capitalized }
        converted += key[key.index(after: last)...]
        return converted
    }

    /// Whether the conversion leaves the ASCII key `bytes` unchanged: it does unless an underscore
    /// stands between two other characters.
    @inline(__always)
    static func isIdentity(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == UInt8(ascii: "_") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: "_") { end -= 1 }
        for index in start..<end where bytes[index] == UInt8(ascii: "_") { return false }
        return true
    }

    /// Writes the conversion of the ASCII key `raw` to `output` (room for `raw.count` bytes) and
    /// returns its length; nil when the key has characters other than ASCII letters, digits and
    /// underscores, whose conversion is left to ``convert(_:)``.
    ///
    /// For these characters Foundation's `lowercased()` maps A–Z to a–z, and `capitalized`
    /// uppercases a letter that follows a non-letter (or starts the part) and lowercases a letter
    /// that follows a letter (the tests check this against Foundation).
    static func convertASCII(_ raw: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>) -> Int? {
        let underscore = UInt8(ascii: "_")
        var start = 0
        var end = raw.count
        while start < end, raw[start] == underscore { start += 1 }
        while end > start, raw[end - 1] == underscore { end -= 1 }
        var written = 0
        for _ in 0..<start {
            output[written] = underscore
            written += 1
        }
        var part = 0
        var inPart = false
        var afterLetter = false
        for index in start..<end {
            let byte = raw[index]
            if byte == underscore {
                if inPart {
                    part += 1
                    inPart = false
                }
                continue
            }
            if !inPart {
                inPart = true
                afterLetter = false
            }
            let lowered = byte | 0x20
            if lowered >= UInt8(ascii: "a"), lowered <= UInt8(ascii: "z") {
                // The first part is lowercased; later parts are capitalized word by word.
                output[written] = part == 0 || afterLetter ? lowered : lowered & ~0x20
                afterLetter = true
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                output[written] = byte
                afterLetter = false
            } else {
                return nil
            }
            written += 1
        }
        for _ in end..<raw.count {
            output[written] = underscore
            written += 1
        }
        return written
    }
}
