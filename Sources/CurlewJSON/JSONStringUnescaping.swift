// Curlew — building a String from a JSON string's bytes, with or without escape sequences.

/// String values from validated JSON string content.
enum JSONStringUnescaping {
    /// The string whose raw content (between the quotes) is `bytes`; `escaped` says whether it has
    /// backslash escapes. The parser validated both the UTF-8 and the escapes.
    @inline(__always)
    static func string(_ bytes: UnsafeBufferPointer<UInt8>, escaped: Bool) -> String {
        // Escape-free content is the string's UTF-8 as it stands: one copy, no intermediate.
        guard escaped else { return String(decoding: bytes, as: UTF8.self) }
        return unescaped(bytes)
    }

    /// Decodes escape sequences straight into the new string's storage; the result is never longer
    /// than the escaped form, so the raw length is enough capacity.
    private static func unescaped(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { output in
            var read = 0
            var written = 0
            @inline(__always) func emit(_ byte: UInt8) {
                output[written] = byte
                written += 1
            }
            while read < bytes.count {
                let byte = bytes[read]
                guard byte == UInt8(ascii: "\\") else {
                    emit(byte)
                    read += 1
                    continue
                }
                let escape = bytes[read + 1]
                read += 2
                switch escape {
                case UInt8(ascii: "b"): emit(0x08)
                case UInt8(ascii: "f"): emit(0x0C)
                case UInt8(ascii: "n"): emit(0x0A)
                case UInt8(ascii: "r"): emit(0x0D)
                case UInt8(ascii: "t"): emit(0x09)
                case UInt8(ascii: "u"):
                    var scalar = UInt32(hexQuad(bytes, at: read))
                    read += 4
                    if scalar >= 0xD800, scalar <= 0xDBFF {
                        // The parser guaranteed a low surrogate escape follows.
                        let low = UInt32(hexQuad(bytes, at: read + 2))
                        read += 6
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    switch scalar {
                    case 0..<0x80:
                        emit(UInt8(scalar))
                    case 0x80..<0x800:
                        emit(UInt8(0xC0 | scalar >> 6))
                        emit(UInt8(0x80 | scalar & 0x3F))
                    case 0x800..<0x10000:
                        emit(UInt8(0xE0 | scalar >> 12))
                        emit(UInt8(0x80 | scalar >> 6 & 0x3F))
                        emit(UInt8(0x80 | scalar & 0x3F))
                    default:
                        emit(UInt8(0xF0 | scalar >> 18))
                        emit(UInt8(0x80 | scalar >> 12 & 0x3F))
                        emit(UInt8(0x80 | scalar >> 6 & 0x3F))
                        emit(UInt8(0x80 | scalar & 0x3F))
                    }
                default:
                    // `"`, `\` and `/` stand for themselves.
                    emit(escape)
                }
            }
            return written
        }
    }

    /// Four hex digits the parser validated.
    @inline(__always)
    private static func hexQuad(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt16 {
        var value: UInt16 = 0
        for offset in index..<index + 4 {
            let byte = bytes[offset]
            let digit: UInt8 =
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
                default: byte &- UInt8(ascii: "A") &+ 10
                }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}
