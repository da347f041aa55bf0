// Curlew — a strict RFC 8259 parser that validates a whole document and writes its tape.

/// Parses UTF-8 JSON into a ``TapeBuilder``, accepting only strict RFC 8259 documents.
///
/// Anything else — trailing commas, comments, leading zeros, control characters or invalid UTF-8 in
/// strings, unpaired surrogate escapes, trailing garbage, empty input, nesting deeper than
/// ``maximumDepth`` — is refused, and the caller hands the document to `JSONDecoder` so that the
/// outcome (often an error, sometimes JSONDecoder's leniency) is exactly JSONDecoder's. On request it
/// also accepts the trailing commas JSONDecoder tolerates, to find values in such documents.
enum JSONTapeParser {
    /// The deepest nesting of arrays and objects accepted; JSONDecoder's limit too.
    static let maximumDepth = 512

    /// How many zero bytes must follow the document in memory: they end every scan without bounds
    /// checks (a NUL is never valid where a scan stops) and make 8-byte loads near the end safe.
    static let padding = 32

    /// Parses `count` bytes at `base` (followed by ``padding`` zero bytes) and appends the values to
    /// `tape`. Returns false when the document is not strict JSON (apart from a comma before a closing
    /// bracket, with `allowsTrailingCommas`).
    static func parse(
        _ base: UnsafePointer<UInt8>, count: Int, allowsTrailingCommas: Bool = false, into tape: inout TapeBuilder
    ) -> Bool {
        // Offsets and indices are stored as UInt32.
        guard count < Int(UInt32.max) - padding else { return false }
        var position = 0
        // A UTF-8 byte-order mark is skipped, as JSONDecoder does.
        if count >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { position = 3 }
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: maximumDepth) { stack in
            guard let stack = stack.baseAddress else { return false }
            // One specialization per grammar, so the strict parse carries no trailing-comma checks.
            if allowsTrailingCommas {
                return parseValues(
                    base, count: count, from: position, grammar: TrailingCommas.self, stack: stack, into: &tape)
            }
            return parseValues(base, count: count, from: position, grammar: Strict.self, stack: stack, into: &tape)
        }
    }

    /// The parse loop. `stack` holds the tape index of each open container; it is iterative so that
    /// hostile nesting cannot exhaust the thread's stack.
    private static func parseValues<Grammar: JSONGrammar>(
        _ base: UnsafePointer<UInt8>, count: Int, from start: Int, grammar: Grammar.Type,
        stack: UnsafeMutablePointer<UInt32>, into tape: inout TapeBuilder
    ) -> Bool {
        var position = skipWhitespace(base, start)
        var depth = 0
        nextValue: while true {
            // `position` is at the first byte of a value.
            let byte = base[position]
            switch byte {
            case UInt8(ascii: "\""):
                guard let end = scanString(base, position + 1, into: &tape) else { return false }
                position = end
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < maximumDepth else { return false }
                let isObject = byte == UInt8(ascii: "{")
                let index = tape.count
                tape.append(
                    TapeEntry(
                        kind: isObject ? .object : .array, flags: 0, offset: UInt32(position), length: 0, next: 0))
                position = skipWhitespace(base, position + 1)
                if base[position] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    position += 1
                    tape.entries[index].next = UInt32(tape.count)
                } else {
                    stack[depth] = UInt32(index)
                    depth += 1
                    if isObject {
                        // A non-empty object's lookup cursor starts at its first key (the entry after it).
                        tape.entries[index].offset = UInt32(index + 1)
                        guard let afterColon = scanKey(base, position, into: &tape) else { return false }
                        position = afterColon
                    }
                    continue nextValue
                }
            case UInt8(ascii: "t"):
                guard matches(base + position, "true") else { return false }
                tape.append(
                    TapeEntry(kind: .true, flags: 0, offset: UInt32(position), length: 4, next: UInt32(tape.count + 1)))
                position += 4
            case UInt8(ascii: "f"):
                guard matches(base + position + 1, "alse") else { return false }
                tape.append(
                    TapeEntry(
                        kind: .false, flags: 0, offset: UInt32(position), length: 5, next: UInt32(tape.count + 1)))
                position += 5
            case UInt8(ascii: "n"):
                guard matches(base + position, "null") else { return false }
                tape.append(
                    TapeEntry(kind: .null, flags: 0, offset: UInt32(position), length: 4, next: UInt32(tape.count + 1)))
                position += 4
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard let end = scanNumber(base, position, into: &tape) else { return false }
                position = end
            default:
                // `]` where a value should be follows a comma (an array's first value is never missing),
                // which JSONDecoder tolerates: the array ends here.
                guard Grammar.allowsTrailingCommas, byte == UInt8(ascii: "]"), depth > 0,
                    tape.entries[Int(stack[depth - 1])].kind == .array
                else { return false }
                position += 1
                tape.entries[Int(stack[depth - 1])].next = UInt32(tape.count)
                depth -= 1
            }

            // A value just ended: continue its container, close containers, or finish the document.
            while true {
                position = skipWhitespace(base, position)
                guard depth > 0 else { return position == count }
                let container = Int(stack[depth - 1])
                tape.entries[container].length += 1
                let isObject = tape.entries[container].kind == .object
                let byte = base[position]
                if byte == UInt8(ascii: ",") {
                    position = skipWhitespace(base, position + 1)
                    if isObject {
                        guard let afterColon = scanKey(base, position, into: &tape) else {
                            // `}` after a comma, which JSONDecoder tolerates: the object ends here.
                            guard Grammar.allowsTrailingCommas, base[position] == UInt8(ascii: "}") else {
                                return false
                            }
                            position += 1
                            tape.entries[container].next = UInt32(tape.count)
                            depth -= 1
                            continue
                        }
                        position = afterColon
                    }
                    continue nextValue
                }
                guard byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return false }
                position += 1
                tape.entries[container].next = UInt32(tape.count)
                depth -= 1
            }
        }
    }

    // MARK: - Pieces

    @inline(__always)
    private static func skipWhitespace(_ base: UnsafePointer<UInt8>, _ start: Int) -> Int {
        var position = start
        while true {
            let byte = base[position]
            guard byte <= 0x20, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return position }
            position += 1
        }
    }

    /// Whether the bytes at `pointer` are `literal` (padding makes reading past the end safe).
    @inline(__always)
    private static func matches(_ pointer: UnsafePointer<UInt8>, _ literal: StaticString) -> Bool {
        let expected = literal.utf8Start
        for offset in 0..<literal.utf8CodeUnitCount where pointer[offset] != expected[offset] { return false }
        return true
    }

    /// Scans an object key at `position` (which must be its opening quote), then the colon; returns
    /// the position of the member's value.
    @inline(__always)
    private static func scanKey(_ base: UnsafePointer<UInt8>, _ position: Int, into tape: inout TapeBuilder) -> Int? {
        guard base[position] == UInt8(ascii: "\""), let end = scanString(base, position + 1, into: &tape) else {
            return nil
        }
        let colon = skipWhitespace(base, end)
        guard base[colon] == UInt8(ascii: ":") else { return nil }
        return skipWhitespace(base, colon + 1)
    }

    /// Scans a string whose content starts at `start`, records it, and returns the position after its
    /// closing quote.
    @inline(__always)
    private static func scanString(_ base: UnsafePointer<UInt8>, _ start: Int, into tape: inout TapeBuilder) -> Int? {
        var position = start
        var flags: UInt8 = 0
        while true {
            // Eight bytes at a time until a quote, backslash, control character or non-ASCII byte.
            let word = UInt64(littleEndian: UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
            let stops = specialBytes(word)
            if stops == 0 {
                position += 8
                continue
            }
            position += stops.trailingZeroBitCount >> 3
            let byte = base[position]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                guard let next = scanEscape(base, position) else { return nil }
                flags |= TapeEntry.escaped
                position = next
            } else if byte >= 0x80 {
                guard let next = scanUTF8Sequence(base, position) else { return nil }
                flags |= TapeEntry.nonASCII
                position = next
            } else {
                // A control character, or the NUL padding at the end of the input.
                return nil
            }
        }
        tape.append(
            TapeEntry(
                kind: .string, flags: flags, offset: UInt32(start), length: UInt32(position - start),
                next: UInt32(tape.count + 1)))
        return position + 1
    }

    /// A mask with the high bit set in (at least) the lowest byte of `word` that is a quote, a
    /// backslash, below 0x20 or above 0x7F; zero when there is none. Bytes above the lowest match may
    /// be flagged spuriously, so only the lowest is used.
    @inline(__always)
    private static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let quoteZero = (quote &- ones) & ~quote
        let backslashZero = (backslash &- ones) & ~backslash
        let control = (word &- ones &* 0x20) & ~word
        return (quoteZero | backslashZero | control | word) & highs
    }

    /// Validates the escape sequence at `position` (a backslash); returns the position after it.
    /// Unpaired surrogates are refused.
    @inline(__always)
    private static func scanEscape(_ base: UnsafePointer<UInt8>, _ position: Int) -> Int? {
        switch base[position + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return position + 2
        case UInt8(ascii: "u"):
            guard let unit = hexQuad(base + position + 2) else { return nil }
            switch unit {
            case 0xD800...0xDBFF:
                guard base[position + 6] == UInt8(ascii: "\\"), base[position + 7] == UInt8(ascii: "u"),
                    let low = hexQuad(base + position + 8), (0xDC00...0xDFFF).contains(low)
                else { return nil }
                return position + 12
            case 0xDC00...0xDFFF:
                return nil
            default:
                return position + 6
            }
        default:
            return nil
        }
    }

    /// The value of four hex digits at `pointer`, or nil.
    @inline(__always)
    static func hexQuad(_ pointer: UnsafePointer<UInt8>) -> UInt16? {
        var value: UInt16 = 0
        for offset in 0..<4 {
            let byte = pointer[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    /// Validates one multi-byte UTF-8 sequence at `position` (well-formed per Unicode table 3-7: no
    /// overlong forms, no surrogates, nothing above U+10FFFF); returns the position after it.
    @inline(__always)
    private static func scanUTF8Sequence(_ base: UnsafePointer<UInt8>, _ position: Int) -> Int? {
        let lead = base[position]
        let second = base[position + 1]
        @inline(__always) func isContinuation(_ byte: UInt8) -> Bool { byte & 0xC0 == 0x80 }
        switch lead {
        case 0xC2...0xDF:
            return isContinuation(second) ? position + 2 : nil
        case 0xE0...0xEF:
            let secondRange: ClosedRange<UInt8> =
                switch lead {
                case 0xE0: 0xA0...0xBF
                case 0xED: 0x80...0x9F
                default: 0x80...0xBF
                }
            guard secondRange.contains(second), isContinuation(base[position + 2]) else { return nil }
            return position + 3
        case 0xF0...0xF4:
            let secondRange: ClosedRange<UInt8> =
                switch lead {
                case 0xF0: 0x90...0xBF
                case 0xF4: 0x80...0x8F
                default: 0x80...0xBF
                }
            guard secondRange.contains(second), isContinuation(base[position + 2]), isContinuation(base[position + 3])
            else { return nil }
            return position + 4
        default:
            return nil
        }
    }

    /// Scans a number at `start` (RFC 8259 grammar), records it, and returns the position after it.
    /// Whatever follows is checked by the caller (only whitespace or a delimiter may).
    @inline(__always)
    private static func scanNumber(_ base: UnsafePointer<UInt8>, _ start: Int, into tape: inout TapeBuilder) -> Int? {
        @inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
        var position = start
        var flags = TapeEntry.integral
        if base[position] == UInt8(ascii: "-") { position += 1 }
        if base[position] == UInt8(ascii: "0") {
            position += 1
        } else if isDigit(base[position]) {
            position += 1
            while isDigit(base[position]) { position += 1 }
        } else {
            return nil
        }
        if base[position] == UInt8(ascii: ".") {
            position += 1
            guard isDigit(base[position]) else { return nil }
            while isDigit(base[position]) { position += 1 }
            flags = 0
        }
        if base[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if base[position] == UInt8(ascii: "+") || base[position] == UInt8(ascii: "-") { position += 1 }
            guard isDigit(base[position]) else { return nil }
            while isDigit(base[position]) { position += 1 }
            flags = 0
        }
        tape.append(
            TapeEntry(
                kind: .number, flags: flags, offset: UInt32(start), length: UInt32(position - start),
                next: UInt32(tape.count + 1)))
        return position
    }
}

/// What the parser accepts beyond RFC 8259, fixed per specialization of its loop.
private protocol JSONGrammar {
    /// Whether a comma may come before a closing bracket, as JSONDecoder allows.
    static var allowsTrailingCommas: Bool { get }
}

/// RFC 8259 exactly.
private enum Strict: JSONGrammar {
    static var allowsTrailingCommas: Bool { false }
}

/// RFC 8259 plus the trailing commas JSONDecoder tolerates.
private enum TrailingCommas: JSONGrammar {
    static var allowsTrailingCommas: Bool { true }
}
