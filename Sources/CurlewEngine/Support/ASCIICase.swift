// Curlew — comparing raw bytes with lowercase ASCII literals, ignoring the case of letters.

/// Case-insensitive matching of bytes against lowercase ASCII literals (URL schemes, header names)
/// without building Strings: used on every request, where String comparisons cost tens of
/// instructions per character.
package enum ASCIICase {
    /// Whether `bytes` begin with `lowercase`, ignoring the case of letters only (so `-` never matches
    /// CR, whose code differs from it by the case bit).
    package static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        let count = lowercase.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        guard let base = bytes.baseAddress else { return true }
        let expected = lowercase.utf8Start
        // Through the base pointer: the bounds were checked once above (per-byte checks showed in profiles).
        for index in 0..<count {
            let want = expected[index]
            let have = base.load(fromByteOffset: index, as: UInt8.self)
            guard (want &- UInt8(ascii: "a") < 26 ? have | 0x20 : have) == want else { return false }
        }
        return true
    }

    /// Whether `bytes` spell `lowercase`, ignoring the case of letters.
    package static func equals(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        bytes.count == lowercase.utf8CodeUnitCount && hasPrefix(bytes, lowercase)
    }
}
