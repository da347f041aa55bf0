// Curlew — the single-value container, which (as in JSONDecoder) is the decoder itself.

extension TapeDecoder: SingleValueDecodingContainer {
    @inline(__always)
    private func scalar<T>(_ type: T.Type, _ read: (UInt32) throws(TapeValueError) -> T) throws -> T {
        do throws(TapeValueError) {
            return try read(value)
        } catch {
            throw document.decodingError(error, T.self, at: path, nil)
        }
    }

    func decodeNil() -> Bool {
        document[value].kind == .null
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        try scalar(Bool.self) { index throws(TapeValueError) in try document.bool(at: index) }
    }

    func decode(_ type: String.Type) throws -> String {
        try scalar(String.self) { index throws(TapeValueError) in try document.string(at: index) }
    }

    func decode(_ type: Double.Type) throws -> Double { try floatingPoint(Double.self) }
    func decode(_ type: Float.Type) throws -> Float { try floatingPoint(Float.self) }
    func decode(_ type: Int.Type) throws -> Int { try integer(Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(Int64.self) }
    func decode(_ type: Int128.Type) throws -> Int128 { try integer(Int128.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(UInt64.self) }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try integer(UInt128.self) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try unwrap(value, as: T.self, parent: path, component: nil)
    }

    @inline(__always)
    private func integer<T: FixedWidthInteger & Decodable>(_ type: T.Type) throws -> T {
        try scalar(T.self) { index throws(TapeValueError) in try document.integer(at: index, as: T.self) }
    }

    @inline(__always)
    private func floatingPoint<T: BinaryFloatingPoint>(_ type: T.Type) throws -> T {
        try scalar(T.self) { index throws(TapeValueError) in try document.floatingPoint(at: index, as: T.self) }
    }
}
