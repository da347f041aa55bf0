// Curlew — the Decoder that Decodable types read the tape through.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Decoder` over a ``TapeDocument``.
///
/// Like JSONDecoder's implementation, one instance serves a whole decode: decoding a nested value
/// points it at that value and its path for the duration of the nested `init(from:)` and restores it
/// afterwards, so no decoder is allocated per value. `superDecoder()` makes a separate instance,
/// since the caller may use it alongside the container it came from.
final class TapeDecoder: Decoder {
    /// The document.
    let document: TapeDocument
    // Both are only touched by this decoder's own short, non-overlapping reads and writes (on the
    // decoding thread), so the dynamic exclusivity checks a class property gets are not needed.
    /// The tape index of the value being decoded.
    @exclusivity(unchecked) var value: UInt32
    /// The path node of the value being decoded.
    @exclusivity(unchecked) var path: UInt32

    /// A decoder for the value at `value`, whose coding path is the node `path`.
    init(document: TapeDocument, value: UInt32, path: UInt32) {
        self.document = document
        self.value = value
        self.path = path
    }

    var codingPath: [any CodingKey] { document.codingPath(path) }

    var userInfo: [CodingUserInfoKey: Any] { document.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(try keyedContainer(at: value, path: path, keyedBy: type))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try unkeyedContainer(at: value, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        // As in JSONDecoder, the decoder is its own single-value container.
        self
    }

    /// A keyed container over the object at `index`, whose path is the node `path`.
    func keyedContainer<Key: CodingKey>(at index: UInt32, path: UInt32, keyedBy type: Key.Type) throws
        -> TapeKeyedContainer<Key>
    {
        let entry = document[index]
        guard entry.kind == .object else {
            throw containerFailure(entry.kind, [String: Any].self, "keyed decoding container", at: path)
        }
        let table: MemberTable? =
            document.lookupMode(of: index) == .rawBytes
            ? nil : MemberTable(document.memberTable(of: index, containerPath: path))
        return TapeKeyedContainer(decoder: self, object: index, path: path, table: table)
    }

    /// An unkeyed container over the array at `index`, whose path is the node `path`.
    func unkeyedContainer(at index: UInt32, path: UInt32) throws -> TapeUnkeyedContainer {
        let entry = document[index]
        guard entry.kind == .array else {
            throw containerFailure(entry.kind, [Any].self, "unkeyed decoding container", at: path)
        }
        return TapeUnkeyedContainer(decoder: self, array: index, path: path)
    }

    /// JSONDecoder's error for asking a `found` value for a container (`what`, of `type`).
    func containerFailure(_ found: TapeKind, _ type: Any.Type, _ what: String, at path: UInt32) -> DecodingError {
        let codingPath = document.codingPath(path)
        if found == .null {
            return .valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: codingPath, debugDescription: "Cannot get \(what) -- found null value instead"))
        }
        return .typeMismatch(
            type,
            DecodingError.Context(
                codingPath: codingPath,
                debugDescription: "Expected to decode \(type) but found \(found.mismatchDescription) instead."))
    }

    /// Decodes the value at `index` as `T`; its path is `parent` extended by `component`.
    ///
    /// `Data`, `Date`, `URL` and `Decimal` follow the configured strategies, and with a key strategy
    /// `[String: V]` keeps its keys unconverted, as in JSONDecoder; everything else runs `T`'s own
    /// `init(from:)` against this decoder. The common scalars are read directly: their `init(from:)`
    /// only reads a single-value container, so the result and any error are the same.
    func unwrap<T: Decodable>(_ index: UInt32, as type: T.Type, parent: UInt32, component: PathComponent?) throws -> T {
        switch ObjectIdentifier(T.self) {
        case ObjectIdentifier(String.self):
            return identity(
                try scalar(index, String.self, parent, component) { i throws(TapeValueError) in
                    try document.string(at: i)
                })
        case ObjectIdentifier(Int.self):
            return identity(
                try scalar(index, Int.self, parent, component) { i throws(TapeValueError) in
                    try document.integer(at: i, as: Int.self)
                })
        case ObjectIdentifier(Double.self):
            return identity(
                try scalar(index, Double.self, parent, component) { i throws(TapeValueError) in
                    try document.floatingPoint(at: i, as: Double.self)
                })
        case ObjectIdentifier(Bool.self):
            return identity(
                try scalar(index, Bool.self, parent, component) { i throws(TapeValueError) in try document.bool(at: i) }
            )
        case ObjectIdentifier(Date.self):
            return identity(try unwrapDate(index, parent: parent, component: component))
        case ObjectIdentifier(Data.self):
            return identity(try unwrapData(index, parent: parent, component: component))
        case ObjectIdentifier(URL.self):
            return identity(try unwrapURL(index, parent: parent, component: component))
        case ObjectIdentifier(Decimal.self):
            return identity(try unwrapDecimal(index, parent: parent, component: component))
        default:
            if let array = document.arrayConformance(of: T.self) {
                return try nested(index, parent: parent, component: component) {
                    try array.decodeElements(self, as: T.self)
                }
            }
            if !document.options.usesDefaultKeys, let dictionary = T.self as? any StringKeyedDictionary.Type {
                return try dictionary.decodeKeepingKeys(self, index, parent: parent, component: component, as: T.self)
            }
            return try nested(index, parent: parent, component: component) { try T(from: self) }
        }
    }

    /// A scalar read at `index`, with JSONDecoder's error for `type` at the value's path.
    @inline(__always)
    private func scalar<S>(
        _ index: UInt32, _ type: S.Type, _ parent: UInt32, _ component: PathComponent?,
        _ read: (UInt32) throws(TapeValueError) -> S
    ) throws -> S {
        do throws(TapeValueError) {
            return try read(index)
        } catch {
            throw document.decodingError(error, S.self, at: parent, component)
        }
    }

    /// Runs `body` with the decoder pointed at the value at `index` and its path.
    @inline(__always)
    func nested<R>(_ index: UInt32, parent: UInt32, component: PathComponent?, _ body: () throws -> R) rethrows -> R {
        let savedValue = value
        let savedPath = path
        value = index
        path = document.path(parent, appending: component)
        defer {
            value = savedValue
            path = savedPath
        }
        return try body()
    }

    /// `value` as `T`, where the caller established that `T` is `U` (by comparing their
    /// `ObjectIdentifier`s), which makes the bit cast an identity.
    @inline(__always)
    private func identity<T, U>(_ value: U) -> T {
        assert(T.self == U.self)
        return unsafeBitCast(value, to: T.self)
    }
}
