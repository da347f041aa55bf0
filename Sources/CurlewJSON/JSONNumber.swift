// Curlew — turning a validated JSON number's bytes into Swift numbers the way JSONDecoder does.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Number conversions from the bytes of a JSON number that the parser already validated.
enum JSONNumber {
    /// A plain integer (`-?digits`) as `T`, or nil when it does not fit.
    @inline(__always)
    static func integer<T: FixedWidthInteger>(_ bytes: UnsafeBufferPointer<UInt8>, as type: T.Type) -> T? {
        guard let base = bytes.baseAddress else { return nil }
        let negative = base[0] == UInt8(ascii: "-")
        var index = negative ? 1 : 0
        // Up to 19 digits always fit in a UInt64 without an overflow check per digit.
        if T.bitWidth <= 64, bytes.count - index <= 19 {
            var magnitude: UInt64 = 0
            while index < bytes.count {
                magnitude = magnitude &* 10 &+ UInt64(base[index] &- UInt8(ascii: "0"))
                index += 1
            }
            if negative {
                if magnitude == 0 { return 0 }
                // |T.min| is T.max + 1; two's-complement negation then truncation gives the value.
                guard T.isSigned, magnitude <= UInt64(T.max) &+ 1 else { return nil }
                return T(truncatingIfNeeded: 0 &- magnitude)
            }
            guard magnitude <= UInt64(T.max) else { return nil }
            return T(truncatingIfNeeded: magnitude)
        }
        var magnitude = T.Magnitude.zero
        while index < bytes.count {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(T.Magnitude(base[index] &- UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            magnitude = sum
            index += 1
        }
        if negative {
            if magnitude == 0 { return 0 }
            guard T.isSigned, magnitude <= T.Magnitude(T.max) + 1 else { return nil }
            return T(truncatingIfNeeded: 0 &- magnitude)
        }
        guard magnitude <= T.Magnitude(T.max) else { return nil }
        return T(truncatingIfNeeded: magnitude)
    }

    /// Any JSON number as the integer type `T`, by JSONDecoder's rules: a plain integer directly;
    /// otherwise (`1.0`, `1e2`, or too large) through `Double`, accepted when the double is an exact
    /// `T` — and for magnitudes from 2^53, where doubles are too coarse, JSONDecoder's own `Decimal`
    /// path decides. Nil: not representable.
    static func integer<T: FixedWidthInteger & Decodable>(
        _ bytes: UnsafeBufferPointer<UInt8>, integral: Bool, as type: T.Type
    ) -> T? {
        if integral, let value = integer(bytes, as: T.self) { return value }
        let double = Self.double(bytes)
        guard let value = T(exactly: double) else { return nil }
        if double.magnitude < 9_007_199_254_740_992 { return value }
        // Rare (a huge integer written with a fraction or exponent): JSONDecoder itself decides, so
        // its Decimal-based result, including its rounding, is reproduced exactly.
        return try? JSONDecoder().decode(T.self, from: Data(bytes))
    }

    /// Powers of ten that are exact doubles.
    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
        1e19, 1e20, 1e21, 1e22,
    ]

    /// Powers of ten that are exact floats.
    private static let exactFloatPowersOfTen: [Float] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10]

    /// The decimal significand and exponent of a number whose significant digits fit in 19 digits,
    /// with its sign; nil when there are more digits (or an absurd exponent).
    @inline(__always)
    private static func decompose(_ bytes: UnsafeBufferPointer<UInt8>) -> (
        significand: UInt64, exponent: Int, negative: Bool
    )? {
        guard let base = bytes.baseAddress else { return nil }
        let end = bytes.count
        var index = 0
        let negative = base[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        var significand: UInt64 = 0
        var digits = 0
        var exponent = 0
        @inline(__always) func digit(_ at: Int) -> UInt8? {
            let value = base[at] &- UInt8(ascii: "0")
            return value < 10 ? value : nil
        }
        while index < end, let value = digit(index) {
            // Leading zeros are not significant digits.
            if significand != 0 || value != 0 {
                digits += 1
                significand = significand &* 10 &+ UInt64(value)
            }
            index += 1
        }
        if index < end, base[index] == UInt8(ascii: ".") {
            index += 1
            while index < end, let value = digit(index) {
                if significand != 0 || value != 0 {
                    digits += 1
                    significand = significand &* 10 &+ UInt64(value)
                }
                exponent -= 1
                index += 1
            }
        }
        guard digits <= 19 else { return nil }
        if index < end {
            // The exponent marker.
            index += 1
            var exponentNegative = false
            if base[index] == UInt8(ascii: "-") {
                exponentNegative = true
                index += 1
            } else if base[index] == UInt8(ascii: "+") {
                index += 1
            }
            var written = 0
            while index < end, let value = digit(index) {
                guard written < 100_000 else { return nil }
                written = written * 10 + Int(value)
                index += 1
            }
            exponent += exponentNegative ? -written : written
        }
        return (significand, exponent, negative)
    }

    /// The double nearest to the number (correctly rounded; may be infinite or zero).
    static func double(_ bytes: UnsafeBufferPointer<UInt8>) -> Double {
        if let (significand, exponent, negative) = decompose(bytes) {
            // Clinger's fast path: both operands are exact doubles, so one IEEE operation rounds
            // the exact value correctly.
            if significand == 0 { return negative ? -0.0 : 0.0 }
            if significand <= 1 << 53, exponent >= -22, exponent <= 22 {
                var value = Double(significand)
                value = exponent < 0 ? value / exactPowersOfTen[-exponent] : value * exactPowersOfTen[exponent]
                return negative ? -value : value
            }
        }
        // The standard library's correctly rounded conversion (strtod, as JSONDecoder uses).
        return Double(Substring(decoding: bytes, as: UTF8.self)) ?? .nan
    }

    /// The float nearest to the number (correctly rounded directly, not through a double).
    static func float(_ bytes: UnsafeBufferPointer<UInt8>) -> Float {
        if let (significand, exponent, negative) = decompose(bytes) {
            if significand == 0 { return negative ? -0.0 : 0.0 }
            if significand <= 1 << 24, exponent >= -10, exponent <= 10 {
                var value = Float(significand)
                value =
                    exponent < 0 ? value / exactFloatPowersOfTen[-exponent] : value * exactFloatPowersOfTen[exponent]
                return negative ? -value : value
            }
        }
        return Float(Substring(decoding: bytes, as: UTF8.self)) ?? .nan
    }

    /// Whether every digit before the exponent is zero (a zero result is then not an underflow).
    static func isTrueZero(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes {
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return true }
            if byte >= UInt8(ascii: "1"), byte <= UInt8(ascii: "9") { return false }
        }
        return true
    }

    /// The number as `T`, by JSONDecoder's rules: nil when it overflows to infinity or underflows to
    /// zero although a digit is not zero.
    @inline(__always)
    static func floatingPoint<T: BinaryFloatingPoint>(_ bytes: UnsafeBufferPointer<UInt8>, as type: T.Type) -> T? {
        let value: T
        if T.self == Float.self {
            value = T(float(bytes))
        } else {
            value = T(double(bytes))
        }
        guard value.isFinite else { return nil }
        guard value != 0 || isTrueZero(bytes) else { return nil }
        return value
    }

    /// The number as a `Decimal`, as JSONDecoder makes it; nil when it is too large for `Decimal`.
    static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Decimal? {
        Decimal(string: String(decoding: bytes, as: UTF8.self))
    }
}
