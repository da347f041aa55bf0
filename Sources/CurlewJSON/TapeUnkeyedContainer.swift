// Curlew — the unkeyed container: an array's elements, walked along the tape.

/// An unkeyed decoding container over an array on the tape.
///
/// It is three words (a reference and four 32-bit indices), so the `any UnkeyedDecodingContainer`
/// holding it stores it inline, without an allocation.
struct TapeUnkeyedContainer: UnkeyedDecodingContainer {
    /// The decoder nested values are decoded through.
    let decoder: TapeDecoder
    /// The tape index of the array.
    let array: UInt32
    /// The path node of the array.
    let path: UInt32
    /// The tape index of the next element (the array's end when there is none).
    private var cursor: UInt32
    /// The index of the next element.
    private var position: UInt32 = 0

    /// A container over the array at tape index `array`, whose path is the node `path`.
    init(decoder: TapeDecoder, array: UInt32, path: UInt32) {
        self.decoder = decoder
        self.array = array
        self.path = path
        cursor = array + 1
    }

    var codingPath: [any CodingKey] { decoder.document.codingPath(path) }

    var count: Int? { Int(decoder.document[array].length) }

    var isAtEnd: Bool { position >= decoder.document[array].length }

    var currentIndex: Int { Int(position) }

    /// Moves past the current element. As in JSONDecoder, `decodeIfPresent` at the end still counts
    /// up `currentIndex`; the cursor stays at the array's end.
    @inline(__always)
    private mutating func advance() {
        if position < decoder.document[array].length { cursor = decoder.document[cursor].next }
        position += 1
    }

    /// The tape index of the current element, or `valueNotFound(type)` at the end.
    @inline(__always)
    private func current<T>(_ type: T.Type, _ message: String = "Unkeyed container is at end.") throws -> UInt32 {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: decoder.document.codingPath(path, appending: .index(Int(position))),
                    debugDescription: message))
        }
        return cursor
    }

    /// The tape index of the current element if there is one and it is not `null`.
    @inline(__always)
    private func currentIfPresent() -> UInt32? {
        guard !isAtEnd, decoder.document[cursor].kind != .null else { return nil }
        return cursor
    }

    @inline(__always)
    private func failure<T>(_ error: TapeValueError, _ type: T.Type) -> any Error {
        decoder.document.decodingError(error, type, at: path, .index(Int(position)))
    }

    // MARK: Scalars

    /// Reads the current element with `read`, moving past it only when that succeeds.
    @inline(__always)
    private mutating func decodeScalar<T>(
        _ type: T.Type, _ read: (TapeDocument, UInt32) throws(TapeValueError) -> T
    ) throws -> T {
        try readAndAdvance(at: try current(T.self), type, read)
    }

    /// Like `decodeScalar`, but the end and an explicit null give nil (and count as an element).
    @inline(__always)
    private mutating func decodeScalarIfPresent<T>(
        _ type: T.Type, _ read: (TapeDocument, UInt32) throws(TapeValueError) -> T
    ) throws -> T? {
        guard let index = currentIfPresent() else {
            advance()
            return nil
        }
        return try readAndAdvance(at: index, type, read)
    }

    @inline(__always)
    private mutating func readAndAdvance<T>(
        at index: UInt32, _ type: T.Type, _ read: (TapeDocument, UInt32) throws(TapeValueError) -> T
    ) throws -> T {
        do throws(TapeValueError) {
            let value = try read(decoder.document, index)
            advance()
            return value
        } catch {
            throw failure(error, T.self)
        }
    }

    @inline(__always)
    private mutating func decodeInteger<T: FixedWidthInteger & Decodable>(_ type: T.Type) throws -> T {
        try decodeScalar(T.self) { (document, index) throws(TapeValueError) in try document.integer(at: index, as: T.self) }
    }

    @inline(__always)
    private mutating func decodeFloatingPoint<T: BinaryFloatingPoint>(_ type: T.Type) throws -> T {
        try decodeScalar(T.self) { (document, index) throws(TapeValueError) in
            try document.floatingPoint(at: index, as: T.self)
        }
    }

    @inline(__always)
    private mutating func decodeIntegerIfPresent<T: FixedWidthInteger & Decodable>(_ type: T.Type) throws -> T? {
        try decodeScalarIfPresent(T.self) { (document, index) throws(TapeValueError) in
            try document.integer(at: index, as: T.self)
        }
    }

    @inline(__always)
    private mutating func decodeFloatingPointIfPresent<T: BinaryFloatingPoint>(_ type: T.Type) throws -> T? {
        try decodeScalarIfPresent(T.self) { (document, index) throws(TapeValueError) in
            try document.floatingPoint(at: index, as: T.self)
        }
    }

    mutating func decodeNil() throws -> Bool {
        // JSONDecoder throws at the end rather than answering false.
        let index = try current(Never.self)
        guard decoder.document[index].kind == .null else { return false }
        advance()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        try decodeScalar(Bool.self) { (document, index) throws(TapeValueError) in try document.bool(at: index) }
    }

    mutating func decode(_ type: String.Type) throws -> String {
        try decodeScalar(String.self) { (document, index) throws(TapeValueError) in try document.string(at: index) }
    }

    mutating func decode(_ type: Double.Type) throws -> Double { try decodeFloatingPoint(Double.self) }
    mutating func decode(_ type: Float.Type) throws -> Float { try decodeFloatingPoint(Float.self) }
    mutating func decode(_ type: Int.Type) throws -> Int { try decodeInteger(Int.self) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodeInteger(Int8.self) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodeInteger(Int16.self) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodeInteger(Int32.self) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodeInteger(Int64.self) }
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try decodeInteger(Int128.self) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try decodeInteger(UInt.self) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeInteger(UInt8.self) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeInteger(UInt16.self) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeInteger(UInt32.self) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeInteger(UInt64.self) }
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try decodeInteger(UInt128.self) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let index = try current(T.self)
        let value = try decoder.unwrap(index, as: T.self, parent: path, component: .index(Int(position)))
        advance()
        return value
    }

    // MARK: Optional scalars (the end and an explicit null both give nil, and count as an element)

    mutating func decodeIfPresent(_ type: Bool.Type) throws -> Bool? {
        try decodeScalarIfPresent(Bool.self) { (document, index) throws(TapeValueError) in try document.bool(at: index) }
    }

    mutating func decodeIfPresent(_ type: String.Type) throws -> String? {
        try decodeScalarIfPresent(String.self) { (document, index) throws(TapeValueError) in try document.string(at: index) }
    }

    mutating func decodeIfPresent(_ type: Double.Type) throws -> Double? {
        try decodeFloatingPointIfPresent(Double.self)
    }
    mutating func decodeIfPresent(_ type: Float.Type) throws -> Float? { try decodeFloatingPointIfPresent(Float.self) }
    mutating func decodeIfPresent(_ type: Int.Type) throws -> Int? { try decodeIntegerIfPresent(Int.self) }
    mutating func decodeIfPresent(_ type: Int8.Type) throws -> Int8? { try decodeIntegerIfPresent(Int8.self) }
    mutating func decodeIfPresent(_ type: Int16.Type) throws -> Int16? { try decodeIntegerIfPresent(Int16.self) }
    mutating func decodeIfPresent(_ type: Int32.Type) throws -> Int32? { try decodeIntegerIfPresent(Int32.self) }
    mutating func decodeIfPresent(_ type: Int64.Type) throws -> Int64? { try decodeIntegerIfPresent(Int64.self) }
    mutating func decodeIfPresent(_ type: UInt.Type) throws -> UInt? { try decodeIntegerIfPresent(UInt.self) }
    mutating func decodeIfPresent(_ type: UInt8.Type) throws -> UInt8? { try decodeIntegerIfPresent(UInt8.self) }
    mutating func decodeIfPresent(_ type: UInt16.Type) throws -> UInt16? { try decodeIntegerIfPresent(UInt16.self) }
    mutating func decodeIfPresent(_ type: UInt32.Type) throws -> UInt32? { try decodeIntegerIfPresent(UInt32.self) }
    mutating func decodeIfPresent(_ type: UInt64.Type) throws -> UInt64? { try decodeIntegerIfPresent(UInt64.self) }

    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        guard let index = currentIfPresent() else {
            advance()
            return nil
        }
        let value = try decoder.unwrap(index, as: T.self, parent: path, component: .index(Int(position)))
        advance()
        return value
    }

    // MARK: Nested containers and super-decoders

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let index = try current(KeyedDecodingContainer<NestedKey>.self)
        let node = decoder.document.path(path, appending: .index(Int(position)))
        let container = try decoder.keyedContainer(at: index, path: node, keyedBy: type)
        advance()
        return KeyedDecodingContainer(container)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let index = try current(
            (any UnkeyedDecodingContainer).self, "Cannot get nested unkeyed container -- unkeyed container is at end.")
        let node = decoder.document.path(path, appending: .index(Int(position)))
        let container = try decoder.unkeyedContainer(at: index, path: node)
        advance()
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let index = try current((any Decoder).self, "Cannot get superDecoder() -- unkeyed container is at end.")
        let document = decoder.document
        let superDecoder = TapeDecoder(
            document: document, value: index, path: document.path(path, appending: .index(Int(position))))
        advance()
        return superDecoder
    }
}
