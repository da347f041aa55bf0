// Where JSONDecoder departs from RFC 8259 and Curlew deliberately does not follow it: the oracle gives
// JSONDecoder a document it reads correctly with the same values, so that Curlew is still compared on
// everything else in the document.

/// JSONDecoder's known departures from RFC 8259.
enum FoundationQuirks {
    /// Whether JSONDecoder refuses `number` (a valid JSON number) as a `Double` or `Float` although its value
    /// is zero.
    ///
    /// JSONDecoder (swift-foundation's `JSONDecoderImpl.isTrueZero`, Swift 6.3.1) tells a zero from an
    /// underflow by looking for the first nonzero digit or exponent marker, four bytes at a time, but
    /// reads the last `count % 4` bytes backwards. When the exponent marker is among those last bytes
    /// and a nonzero exponent digit follows it (`0e1`, `0E5`, `0.00e1`, `-0.0e12`), it sees the digit
    /// first, calls the zero an underflow and throws "not representable" (a `dataCorrupted` error at the
    /// top). Integer and `Decimal` decoding are not affected. Curlew returns the zero, the value RFC 8259
    /// gives these numbers (`JSONNumber.isTrueZero` reads in order).
    static func refusesZero(_ number: ArraySlice<UInt8>) -> Bool {
        guard valueIsZero(number) else { return false }
        return !foundationIsTrueZero(Array(number))
    }

    /// Whether every digit of the significand is zero.
    private static func valueIsZero(_ number: ArraySlice<UInt8>) -> Bool {
        for byte in number {
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return true }
            if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(byte) { return false }
        }
        return true
    }

    /// A transcription of JSONDecoder's test, with its order of reading.
    private static func foundationIsTrueZero(_ bytes: [UInt8]) -> Bool {
        func check(_ byte: UInt8) -> Bool? {
            switch byte {
            case UInt8(ascii: "1")...UInt8(ascii: "9"): false
            case UInt8(ascii: "e"), UInt8(ascii: "E"): true
            default: nil
            }
        }
        var start = 0
        while bytes.count - start >= 4 {
            for offset in 0..<4 { if let result = check(bytes[start + offset]) { return result } }
            start += 4
        }
        // The remaining one to three bytes, last first.
        for index in (start..<bytes.count).reversed() { if let result = check(bytes[index]) { return result } }
        return true
    }

    /// The strict JSON `document` with every number JSONDecoder would misread (`refusesZero`) written
    /// as `0` or `-0`, which every type decodes to the same value (`0`, `0.0` or `-0.0`, a zero `Decimal`);
    /// nil when it has none.
    static func rewritingMisreadZeros(_ document: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(document.count)
        var changed = false
        var index = 0
        while index < document.count {
            let byte = document[index]
            if byte == UInt8(ascii: "\"") {
                // Copy the string through its closing quote (the document is strict: it has one).
                var end = index + 1
                while end < document.count, document[end] != UInt8(ascii: "\"") {
                    end += document[end] == UInt8(ascii: "\\") ? 2 : 1
                }
                output.append(contentsOf: document[index..<min(end + 1, document.count)])
                index = end + 1
            } else if byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                var end = index + 1
                while end < document.count, isNumberByte(document[end]) { end += 1 }
                let number = document[index..<end]
                if refusesZero(number) {
                    output.append(contentsOf: Array((byte == UInt8(ascii: "-") ? "-0" : "0").utf8))
                    changed = true
                } else {
                    output.append(contentsOf: number)
                }
                index = end
            } else {
                output.append(byte)
                index += 1
            }
        }
        return changed ? output : nil
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"),
            UInt8(ascii: "+"), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}
