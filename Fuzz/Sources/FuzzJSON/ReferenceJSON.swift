// RFC 8259 as written, for oracle 1: a recursive-descent recogniser that favours being obviously right over
// being fast, with the two restrictions Curlew documents (no unpaired surrogate escapes, at most 512
// levels of nesting) and JSONDecoder's skipped byte-order mark.

/// Whether a document is strict JSON.
enum ReferenceJSON {
    /// The deepest nesting accepted (JSONDecoder's limit, which Curlew keeps).
    static let maximumDepth = 512

    static func isStrict(_ document: [UInt8]) -> Bool {
        var reader = Reader(bytes: document)
        // JSONDecoder skips one UTF-8 byte-order mark.
        if document.starts(with: [0xEF, 0xBB, 0xBF]) { reader.position = 3 }
        // JSON-text = ws value ws
        reader.whitespace()
        guard reader.value(depth: 0) else { return false }
        reader.whitespace()
        return reader.position == document.count
    }

    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        /// The current byte, or nil at the end.
        var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        /// ws = *( %x20 / %x09 / %x0A / %x0D )
        mutating func whitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
        }

        /// Consumes `byte` if it is next.
        mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            position += 1
            return true
        }

        /// Consumes `literal` if it is next.
        mutating func take(_ literal: String) -> Bool {
            let utf8 = Array(literal.utf8)
            guard bytes[position...].starts(with: utf8) else { return false }
            position += utf8.count
            return true
        }

        /// value = false / null / true / object / array / number / string. `depth`: the containers
        /// this value is inside.
        mutating func value(depth: Int) -> Bool {
            switch current {
            case UInt8(ascii: "{"): return depth < ReferenceJSON.maximumDepth && object(depth: depth + 1)
            case UInt8(ascii: "["): return depth < ReferenceJSON.maximumDepth && array(depth: depth + 1)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return take("true")
            case UInt8(ascii: "f"): return take("false")
            case UInt8(ascii: "n"): return take("null")
            default: return number()
            }
        }

        /// object = begin-object [ member *( value-separator member ) ] end-object
        /// member = string name-separator value
        mutating func object(depth: Int) -> Bool {
            position += 1
            whitespace()
            if take(UInt8(ascii: "}")) { return true }
            while true {
                guard string() else { return false }
                whitespace()
                guard take(UInt8(ascii: ":")) else { return false }
                whitespace()
                guard value(depth: depth) else { return false }
                whitespace()
                if take(UInt8(ascii: "}")) { return true }
                guard take(UInt8(ascii: ",")) else { return false }
                whitespace()
            }
        }

        /// array = begin-array [ value *( value-separator value ) ] end-array
        mutating func array(depth: Int) -> Bool {
            position += 1
            whitespace()
            if take(UInt8(ascii: "]")) { return true }
            while true {
                guard value(depth: depth) else { return false }
                whitespace()
                if take(UInt8(ascii: "]")) { return true }
                guard take(UInt8(ascii: ",")) else { return false }
                whitespace()
            }
        }

        /// number = [ minus ] int [ frac ] [ exp ]; int = zero / ( digit1-9 *DIGIT );
        /// frac = decimal-point 1*DIGIT; exp = e [ minus / plus ] 1*DIGIT
        mutating func number() -> Bool {
            func isDigit(_ byte: UInt8?) -> Bool { byte.map { (0x30...0x39).contains($0) } ?? false }
            _ = take(UInt8(ascii: "-"))
            if take(UInt8(ascii: "0")) {
                // No more digits may follow a leading zero (they would be a syntax error after the value).
            } else {
                guard isDigit(current) else { return false }
                while isDigit(current) { position += 1 }
            }
            if take(UInt8(ascii: ".")) {
                guard isDigit(current) else { return false }
                while isDigit(current) { position += 1 }
            }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
                guard isDigit(current) else { return false }
                while isDigit(current) { position += 1 }
            }
            return true
        }

        /// string = quotation-mark *char quotation-mark, in UTF-8 (RFC 8259 §8.1), with every `\u`
        /// escape of a surrogate in a high-low pair.
        mutating func string() -> Bool {
            guard take(UInt8(ascii: "\"")) else { return false }
            var run: [UInt8] = []
            while true {
                guard let byte = current else { return false }
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    // The unescaped characters must be well-formed UTF-8.
                    return String(validating: run, as: UTF8.self) != nil
                case 0x00..<0x20:
                    return false
                case UInt8(ascii: "\\"):
                    guard let escape = current else { return false }
                    position += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        break
                    case UInt8(ascii: "u"):
                        guard let unit = hex() else { return false }
                        if (0xDC00...0xDFFF).contains(unit) { return false }
                        if (0xD800...0xDBFF).contains(unit) {
                            guard take("\\u"), let low = hex(), (0xDC00...0xDFFF).contains(low) else { return false }
                        }
                    default:
                        return false
                    }
                    // An escape separates the UTF-8 runs on either side; each must be well-formed.
                    guard String(validating: run, as: UTF8.self) != nil else { return false }
                    run.removeAll()
                default:
                    run.append(byte)
                }
            }
        }

        /// Four hex digits.
        mutating func hex() -> UInt32? {
            guard position + 4 <= bytes.count else { return nil }
            guard let text = String(validating: bytes[position..<position + 4], as: UTF8.self),
                text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }),
                let value = UInt32(text, radix: 16)
            else { return nil }
            position += 4
            return value
        }
    }
}
