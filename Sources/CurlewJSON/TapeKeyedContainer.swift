// Curlew — the keyed container: an object's members, found by key on the tape.

/// A keyed decoding container over an object on the tape.
///
/// In the common case (escape-free ASCII keys, no duplicates, keys used as written or converted from
/// snake case) it finds members by comparing the requested key's UTF-8 with the key bytes; otherwise
/// it holds the same `[key: value]` table JSONDecoder builds.
struct TapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// The decoder nested values are decoded through.
    let decoder: TapeDecoder
    /// The tape index of the object.
    let object: UInt32
    /// The path node of the object.
    let path: UInt32
    /// Converted key to value index; nil in raw-bytes mode.
    let table: MemberTable?

    var codingPath: [any CodingKey] { decoder.document.codingPath(path) }

    var allKeys: [Key] {
        let document = decoder.document
        if let table {
            // Document order, for determinism (JSONDecoder's order is its dictionary's).
            return table.members.sorted { $0.value < $1.value }.compactMap { Key(stringValue: $0.key) }
        }
        var keys: [Key] = []
        keys.reserveCapacity(Int(document[object].length))
        var key = object + 1
        while key < document[object].next {
            let name = String(decoding: document.lookupKeyBytes(at: key), as: UTF8.self)
            if let codingKey = Key(stringValue: name) { keys.append(codingKey) }
            key = document[key + 1].next
        }
        return keys
    }

    func contains(_ key: Key) -> Bool {
        valueIndex(named: key.stringValue) != nil
    }

    /// The tape index of the value for the key named `name`, or nil.
    @inline(__always)
    private func valueIndex(named name: String) -> UInt32? {
        if let table { return table.members[name] }
        return decoder.document.member(of: object, named: name)
    }

    /// The tape index of the value for `key`, or `keyNotFound`.
    @inline(__always)
    private func valueIndex(for key: Key) throws -> UInt32 {
        guard let index = valueIndex(named: key.stringValue) else {
            throw decoder.document.keyNotFound(key, at: path)
        }
        return index
    }

    /// The tape index of a present, non-null value for `key`, or nil.
    @inline(__always)
    private func presentValueIndex(for key: Key) -> UInt32? {
        guard let index = valueIndex(named: key.stringValue), decoder.document[index].kind != .null else { return nil }
        return index
    }

    // MARK: Scalars

    /// Reads the value at `index` with `read`, turning a failure into JSONDecoder's error for `key`.
    @inline(__always)
    private func scalar<T>(
        at index: UInt32, key: Key, as type: T.Type, _ read: (TapeDocument, UInt32) throws(TapeValueError) -> T
    ) throws -> T {
        do throws(TapeValueError) {
            return try read(decoder.document, index)
        } catch {
            throw decoder.document.decodingError(error, T.self, at: path, .key(key))
        }
    }

    @inline(__always)
    private func bool(at index: UInt32, key: Key) throws -> Bool {
        try scalar(at: index, key: key, as: Bool.self) { (document, index) throws(TapeValueError) in
            try document.bool(at: index)
        }
    }

    @inline(__always)
    private func string(at index: UInt32, key: Key) throws -> String {
        try scalar(at: index, key: key, as: String.self) { (document, index) throws(TapeValueError) in
            try document.string(at: index)
        }
    }

    @inline(__always)
    private func integer<T: FixedWidthInteger & Decodable>(at index: UInt32, key: Key, as type: T.Type) throws -> T {
        try scalar(at: index, key: key, as: T.self) { (document, index) throws(TapeValueError) in
            try document.integer(at: index, as: T.self)
        }
    }

    @inline(__always)
    private func floatingPoint<T: BinaryFloatingPoint>(at index: UInt32, key: Key, as type: T.Type) throws -> T {
        try scalar(at: index, key: key, as: T.self) { (document, index) throws(TapeValueError) in
            try document.floatingPoint(at: index, as: T.self)
        }
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        decoder.document[try valueIndex(for: key)].kind == .null
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try bool(at: valueIndex(for: key), key: key)
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try string(at: valueIndex(for: key), key: key)
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try floatingPoint(at: valueIndex(for: key), key: key, as: Double.self)
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try floatingPoint(at: valueIndex(for: key), key: key, as: Float.self)
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try integer(at: valueIndex(for: key), key: key, as: Int.self)
    }

    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try integer(at: valueIndex(for: key), key: key, as: Int8.self)
    }

    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try integer(at: valueIndex(for: key), key: key, as: Int16.self)
    }

    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try integer(at: valueIndex(for: key), key: key, as: Int32.self)
    }

    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try integer(at: valueIndex(for: key), key: key, as: Int64.self)
    }

    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 {
        try integer(at: valueIndex(for: key), key: key, as: Int128.self)
    }

    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try integer(at: valueIndex(for: key), key: key, as: UInt.self)
    }

    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try integer(at: valueIndex(for: key), key: key, as: UInt8.self)
    }

    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try integer(at: valueIndex(for: key), key: key, as: UInt16.self)
    }

    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try integer(at: valueIndex(for: key), key: key, as: UInt32.self)
    }

    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try integer(at: valueIndex(for: key), key: key, as: UInt64.self)
    }

    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 {
        try integer(at: valueIndex(for: key), key: key, as: UInt128.self)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.unwrap(valueIndex(for: key), as: T.self, parent: path, component: .key(key))
    }

    // MARK: Optional scalars (a missing key and an explicit null both give nil)

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try bool(at: index, key: key)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try string(at: index, key: key)
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try floatingPoint(at: index, key: key, as: Double.self)
    }

    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try floatingPoint(at: index, key: key, as: Float.self)
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try integer(at: index, key: key, as: Int.self)
    }

    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try integer(at: index, key: key, as: Int8.self)
    }

    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try integer(at: index, key: key, as: Int16.self)
    }

    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try integer(at: index, key: key, as: Int32.self)
    }

    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try integer(at: index, key: key, as: Int64.self)
    }

    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try integer(at: index, key: key, as: UInt.self)
    }

    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try integer(at: index, key: key, as: UInt8.self)
    }

    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try integer(at: index, key: key, as: UInt16.self)
    }

    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try integer(at: index, key: key, as: UInt32.self)
    }

    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try integer(at: index, key: key, as: UInt64.self)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = presentValueIndex(for: key) else { return nil }
        return try decoder.unwrap(index, as: T.self, parent: path, component: .key(key))
    }

    // MARK: Nested containers and super-decoders

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let index = try valueIndex(for: key)
        let node = decoder.document.path(path, appending: .key(key))
        return KeyedDecodingContainer(try decoder.keyedContainer(at: index, path: node, keyedBy: type))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let index = try valueIndex(for: key)
        let node = decoder.document.path(path, appending: .key(key))
        return try decoder.unkeyedContainer(at: index, path: node)
    }

    func superDecoder() throws -> any Decoder {
        superDecoder(named: TapeCodingKey.superKey.stringValue, key: TapeCodingKey.superKey)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        superDecoder(named: key.stringValue, key: key)
    }

    /// A separate decoder for the member named `name`, or for `null` when there is none (as in JSONDecoder).
    private func superDecoder(named name: String, key: any CodingKey) -> TapeDecoder {
        let document = decoder.document
        let index = valueIndex(named: name) ?? document.nullIndex
        return TapeDecoder(document: document, value: index, path: document.path(path, appending: .key(key)))
    }
}

/// A keyed container's `[converted key: value index]` table (a class, so that the container stays
/// cheap to copy when it has none).
final class MemberTable {
    /// The members, the first of duplicate keys winning.
    let members: [String: UInt32]

    /// A table of `members`.
    init(_ members: [String: UInt32]) {
        self.members = members
    }
}
