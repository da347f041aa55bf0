// Curlew — the file name a response suggests, made safe to join to a directory.

import HTTPTypes

extension ResponseHead {
    /// The file name the response suggests for its body: `Content-Disposition`'s `filename*` (RFC 6266 with
    /// RFC 8187's `UTF-8''` or `ISO-8859-1''` encoding) over its `filename`, else the last segment of the
    /// URL the response came from (percent-decoded).
    ///
    /// The name is made safe to join to a directory: `/` and `\` become `_`, control and format characters
    /// (bidi overrides, zero-width characters) are removed,
    /// runs of dots become one dot and a leading dot becomes `_` (no `..`, no hidden file), surrounding
    /// spaces are trimmed and it is cut to 255 bytes. A `filename*` or `filename` that is empty, `.` or `..`
    /// (or nothing once made safe) falls back to the URL's segment; nil when that gives no name either.
    public var suggestedFilename: String? {
        let disposition = headerFields[.contentDisposition].map(ContentDisposition.init)
        for candidate in [disposition?.extendedFilename, disposition?.filename] {
            if let candidate, let name = SafeFilename.make(candidate) { return name }
        }
        return SafeFilename.make(Self.lastPathSegment(of: effectiveURL))
    }

    /// The URL's last non-empty path segment, percent-decoded (as UTF-8; undecodable escapes kept).
    private static func lastPathSegment(of url: String) -> String {
        var rest = Substring(url)
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") {
            rest = rest[rest.index(colon, offsetBy: 3)...]
        }
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        // The authority is not a path segment.
        guard let slash = rest.firstIndex(of: "/") else { return "" }
        let segment = rest[slash...].split(separator: "/").last ?? ""
        return PercentDecoding.decode(segment).flatMap { String(validating: $0, as: UTF8.self) } ?? String(segment)
    }
}

/// The `filename` and `filename*` parameters of a `Content-Disposition` value.
struct ContentDisposition {
    private(set) var filename: String?
    private(set) var extendedFilename: String?

    init(_ value: String) {
        for (name, value) in Self.parameters(value) {
            switch name.lowercased() {
            case "filename" where filename == nil: filename = value
            case "filename*" where extendedFilename == nil: extendedFilename = Self.decodeExtended(value)
            default: break
            }
        }
    }

    /// The `name=value` parameters after the disposition type; quoted strings unquoted (`\x` → `x`).
    private static func parameters(_ value: String) -> [(String, String)] {
        var result: [(String, String)] = []
        var characters = Substring(value)
        // Skip the disposition type.
        guard let first = characters.firstIndex(of: ";") else { return [] }
        characters = characters[characters.index(after: first)...]
        while !characters.isEmpty {
            characters = characters.drop { $0 == " " || $0 == "\t" || $0 == ";" }
            guard let equals = characters.firstIndex(of: "=") else { break }
            let name = characters[..<equals].trimmingCharacters(in: " \t")
            characters = characters[characters.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            var parameter = ""
            if characters.first == "\"" {
                characters = characters.dropFirst()
                var escaped = false
                while let character = characters.first {
                    characters = characters.dropFirst()
                    if escaped {
                        parameter.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        parameter.append(character)
                    }
                }
                // Anything up to the next `;` after a closing quote is not part of the value.
                if let semicolon = characters.firstIndex(of: ";") {
                    characters = characters[semicolon...]
                } else {
                    characters = ""
                }
            } else {
                let end = characters.firstIndex(of: ";") ?? characters.endIndex
                parameter = characters[..<end].trimmingCharacters(in: " \t")
                characters = characters[end...]
            }
            if !name.isEmpty { result.append((name, parameter)) }
        }
        return result
    }

    /// RFC 8187's `charset'language'percent-encoded` as text; nil for another charset or bytes that are
    /// not valid in the charset.
    private static func decodeExtended(_ value: String) -> String? {
        let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3, let bytes = PercentDecoding.decode(pieces[2]) else { return nil }
        switch pieces[0].lowercased() {
        case "utf-8": return String(validating: bytes, as: UTF8.self)
        // ISO-8859-1 maps each byte to the code point of the same number.
        case "iso-8859-1": return String(String.UnicodeScalarView(bytes.compactMap(Unicode.Scalar.init)))
        default: return nil
        }
    }
}

/// Percent-decoding of URL and RFC 8187 text.
enum PercentDecoding {
    /// The bytes `text` encodes; nil when a `%` is not followed by two hex digits.
    static func decode(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A name from a server made safe to use as one file name in a directory the caller chose.
enum SafeFilename {
    /// `name` made safe, or nil when nothing usable is left (empty, `.`, `..`).
    static func make(_ name: String) -> String? {
        let trimmed = name.trimmingCharacters(in: " \t")
        guard !trimmed.isEmpty, trimmed != ".", trimmed != ".." else { return nil }
        var scalars = String.UnicodeScalarView()
        for scalar in trimmed.unicodeScalars {
            switch scalar.value {
            case 0..<0x20, 0x7F..<0xA0: continue  // C0 and C1 controls, DEL
            // Format characters (bidi overrides, zero-width ones) make a name display as another.
            case _ where scalar.properties.generalCategory == .format: continue
            case 0x2F, 0x5C: scalars.append("_")  // `/` and `\`
            case 0x2E where scalars.last == ".": continue  // no `..`
            default: scalars.append(scalar)
            }
        }
        var safe = String(scalars).trimmingCharacters(in: " \t")
        // Nothing but dots (`...` became `.`) names no file.
        guard safe.contains(where: { $0 != "." }) else { return nil }
        // By byte, not by character: a dot followed by a combining mark is one character, and still a
        // hidden file.
        if safe.utf8.first == UInt8(ascii: ".") { safe = "_" + String(safe.unicodeScalars.dropFirst()) }
        // File names are at most 255 bytes; cut on a character boundary. A first character longer than
        // that (a letter with hundreds of combining marks) leaves nothing: the caller falls back.
        while safe.utf8.count > 255 { safe.removeLast() }
        return safe.isEmpty ? nil : safe
    }
}

extension StringProtocol {
    /// The text without the leading and trailing characters in `set`.
    fileprivate func trimmingCharacters(in set: String) -> String {
        let characters = Array(set)
        let start = firstIndex { !characters.contains($0) } ?? endIndex
        let end = lastIndex { !characters.contains($0) }.map { index(after: $0) } ?? start
        return start < end ? String(self[start..<end]) : ""
    }
}
