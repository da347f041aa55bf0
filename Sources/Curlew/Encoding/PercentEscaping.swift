// Curlew — percent-escaping bytes outside a set of allowed ASCII characters.

/// Byte-level percent-escaping shared by query encoding and path joining.
///
/// Working on UTF-8 bytes rather than `CharacterSet` keeps the result identical on every platform
/// and independent of Foundation's changing URL-encoding defaults.
enum PercentEscaping {
    /// RFC 3986 unreserved characters: `A-Z a-z 0-9 - . _ ~`.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Characters a path may hold unescaped (RFC 3986 `pchar` plus `/`): unreserved, sub-delims, `:`, `@`.
    static func isPathAllowed(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        return switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }

    /// Escapes every byte of `text` for which `allowed` is false as `%XX` (upper-case hex).
    ///
    /// With `keepingEscapes`, a `%` followed by two hex digits is kept as it is, so text someone
    /// already escaped is not escaped twice; a lone `%` is still written as `%25`.
    static func escape(_ text: some StringProtocol, keepingEscapes: Bool = false, allowed: (UInt8) -> Bool) -> String {
        // Most keys, values and paths need no escaping: check first (on contiguous bytes, which is
        // several times cheaper than iterating the UTF-8 view) and skip the copy.
        var string = String(text)
        if string.withUTF8({ bytes in bytes.allSatisfy(allowed) }) { return string }
        let bytes = Array(text.utf8)
        var escaped: [UInt8] = []
        escaped.reserveCapacity(bytes.count + 16)
        for (index, byte) in bytes.enumerated() {
            if allowed(byte) || (keepingEscapes && isEscapeStart(bytes, at: index)) {
                escaped.append(byte)
            } else {
                escaped.append(UInt8(ascii: "%"))
                escaped.append(hexDigits[Int(byte >> 4)])
                escaped.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    private static func isEscapeStart(_ bytes: [UInt8], at index: Int) -> Bool {
        bytes[index] == UInt8(ascii: "%") && index + 2 < bytes.count && isHexDigit(bytes[index + 1])
            && isHexDigit(bytes[index + 2])
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "F"),
            UInt8(ascii: "a")...UInt8(ascii: "f"):
            true
        default:
            false
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
