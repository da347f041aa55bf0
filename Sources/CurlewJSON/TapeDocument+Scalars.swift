// Curlew — reading booleans, strings and numbers off the tape with JSONDecoder's rules.

extension TapeDocument {
    /// The boolean at `index`. JSONDecoder reports `null` here as a type mismatch, not a missing value.
    @inline(__always)
    func bool(at index: UInt32) throws(TapeValueError) -> Bool {
        switch self[index].kind {
        case .true: return true
        case .false: return false
        case let kind: throw .typeMismatch(found: kind)
        }
    }

    /// The string at `index`.
    @inline(__always)
    func string(at index: UInt32) throws(TapeValueError) -> String {
        let entry = self[index]
        guard entry.kind == .string else { throw Self.failure(for: entry.kind) }
        return JSONStringUnescaping.string(rawBytes(of: entry), escaped: entry.flags & TapeEntry.escaped != 0)
    }

    /// The integer at `index`.
    @inline(__always)
    func integer<T: FixedWidthInteger & Decodable>(at index: UInt32, as type: T.Type) throws(TapeValueError) -> T {
        let entry = self[index]
        guard entry.kind == .number else { throw Self.failure(for: entry.kind) }
        let bytes = rawBytes(of: entry)
        guard let value = JSONNumber.integer(bytes, integral: entry.flags & TapeEntry.integral != 0, as: T.self)
        else { throw .numberNotRepresentable(String(decoding: bytes, as: UTF8.self)) }
        return value
    }

    /// The floating-point number at `index`; with `convertFromString`, also its escape-free string
    /// spellings of infinity and NaN (JSONDecoder compares the raw bytes, so escaped ones do not match).
    @inline(__always)
    func floatingPoint<T: BinaryFloatingPoint>(at index: UInt32, as type: T.Type) throws(TapeValueError) -> T {
        let entry = self[index]
        let bytes = rawBytes(of: entry)
        switch entry.kind {
        case .number:
            guard let value = JSONNumber.floatingPoint(bytes, as: T.self) else {
                throw .numberNotRepresentable(String(decoding: bytes, as: UTF8.self))
            }
            return value
        case .string where entry.flags & TapeEntry.escaped == 0:
            if let strings = options.nonConformingFloatStrings {
                if bytes.elementsEqual(strings.positiveInfinity) { return .infinity }
                if bytes.elementsEqual(strings.negativeInfinity) { return -.infinity }
                if bytes.elementsEqual(strings.nan) { return .nan }
            }
            throw .typeMismatch(found: .string)
        default:
            throw Self.failure(for: entry.kind)
        }
    }

    /// The failure for a value that is not of the requested kind.
    @inline(__always)
    static func failure(for kind: TapeKind) -> TapeValueError {
        kind == .null ? .valueNotFound : .typeMismatch(found: kind)
    }
}
