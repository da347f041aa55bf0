// Curlew — Data, Date, URL, Decimal and string-keyed dictionaries, as JSONDecoder decodes them.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension TapeDecoder {
    /// Throws `valueNotFound(type)` when the value at `index` is `null`.
    @inline(__always)
    private func requireNotNull<T>(_ index: UInt32, _ type: T.Type, parent: UInt32, component: PathComponent?) throws {
        if document[index].kind == .null {
            throw document.decodingError(.valueNotFound, type, at: parent, component)
        }
    }

    /// A string for a strategy; failures are reported as failures to decode a `String`.
    @inline(__always)
    private func strategyString(_ index: UInt32, parent: UInt32, component: PathComponent?) throws -> String {
        do throws(TapeValueError) {
            return try document.string(at: index)
        } catch {
            throw document.decodingError(error, String.self, at: parent, component)
        }
    }

    /// A double for a strategy; failures are reported as failures to decode a `Double`.
    @inline(__always)
    private func strategyDouble(_ index: UInt32, parent: UInt32, component: PathComponent?) throws -> Double {
        do throws(TapeValueError) {
            return try document.floatingPoint(at: index, as: Double.self)
        } catch {
            throw document.decodingError(error, Double.self, at: parent, component)
        }
    }

    func unwrapData(_ index: UInt32, parent: UInt32, component: PathComponent?) throws -> Data {
        try requireNotNull(index, Data.self, parent: parent, component: component)
        switch document.options.dataStrategy {
        case .deferredToData:
            return try nested(index, parent: parent, component: component) { try Data(from: self) }
        case .base64:
            let string = try strategyString(index, parent: parent, component: component)
            guard let data = Data(base64Encoded: string) else {
                throw document.dataCorrupted("Encountered Data is not valid Base64.", at: parent, component)
            }
            return data
        case .custom(let closure):
            return try nested(index, parent: parent, component: component) { try closure(self) }
        }
    }

    func unwrapDate(_ index: UInt32, parent: UInt32, component: PathComponent?) throws -> Date {
        try requireNotNull(index, Date.self, parent: parent, component: component)
        switch document.options.dateStrategy {
        case .deferredToDate:
            return try nested(index, parent: parent, component: component) { try Date(from: self) }
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try strategyDouble(index, parent: parent, component: component))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try strategyDouble(index, parent: parent, component: component) / 1000.0)
        case .iso8601:
            let string = try strategyString(index, parent: parent, component: component)
            guard let date = try? Date.ISO8601FormatStyle().parse(string) else {
                // JSONDecoder reports this at the decoder's current path (the container's), not the value's.
                throw document.dataCorrupted("Expected date string to be ISO8601-formatted.", at: path)
            }
            return date
        case .custom(let closure):
            return try nested(index, parent: parent, component: component) { try closure(self) }
        }
    }

    func unwrapURL(_ index: UInt32, parent: UInt32, component: PathComponent?) throws -> URL {
        try requireNotNull(index, URL.self, parent: parent, component: component)
        let string = try strategyString(index, parent: parent, component: component)
        guard let url = URL(string: string) else {
            throw document.dataCorrupted("Invalid URL string.", at: parent, component)
        }
        return url
    }

    func unwrapDecimal(_ index: UInt32, parent: UInt32, component: PathComponent?) throws -> Decimal {
        let entry = document[index]
        switch entry.kind {
        case .number:
            let bytes = document.rawBytes(of: entry)
            guard let decimal = JSONNumber.decimal(bytes) else {
                throw document.decodingError(
                    .numberNotRepresentable(String(decoding: bytes, as: UTF8.self)), Decimal.self, at: parent, component
                )
            }
            return decimal
        case .null:
            throw document.decodingError(.valueNotFound, Decimal.self, at: parent, component)
        default:
            throw DecodingError.typeMismatch(
                Decimal.self,
                DecodingError.Context(
                    codingPath: document.codingPath(parent, appending: component),
                    debugDescription: "Expected to decode Decimal but found \(entry.kind.mismatchDescription) instead.")
            )
        }
    }
}

/// `[String: V]`, which JSONDecoder decodes with its keys as written when a key strategy is set.
protocol StringKeyedDictionary {
    /// Decodes the object at `index` with unconverted keys: every member's value is decoded, and
    /// the first of duplicate keys is kept. `type` is `Self` (generic so that callers holding only
    /// the metatype avoid an `Optional` of their type).
    static func decodeKeepingKeys<R>(
        _ decoder: TapeDecoder, _ index: UInt32, parent: UInt32, component: PathComponent?, as type: R.Type
    ) throws -> R
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Decodable {
    static func decodeKeepingKeys<R>(
        _ decoder: TapeDecoder, _ index: UInt32, parent: UInt32, component: PathComponent?, as type: R.Type
    ) throws -> R {
        let document = decoder.document
        let entry = document[index]
        guard entry.kind == .object else {
            let codingPath = document.codingPath(parent, appending: component)
            if entry.kind == .null {
                throw DecodingError.valueNotFound(
                    [String: Any].self,
                    DecodingError.Context(
                        codingPath: codingPath,
                        debugDescription: "Cannot get value of type \([String: Any].self) -- found null value instead"))
            }
            throw DecodingError.typeMismatch(
                [String: Any].self,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription:
                        "Expected to decode \([String: Any].self) but found \(entry.kind.mismatchDescription) instead.")
            )
        }
        let node = document.path(parent, appending: component)
        var result: [String: Value] = [:]
        result.reserveCapacity(Int(entry.length))
        var key = index + 1
        while key < entry.next {
            let name = document.keyString(at: key)
            let value = try decoder.unwrap(
                key + 1, as: Value.self, parent: node, component: .key(TapeCodingKey(stringValue: name)))
            if result[name] == nil { result[name] = value }
            key = document[key + 1].next
        }
        guard let typed = result as? R else {
            throw DecodingError.typeMismatch(
                R.self, DecodingError.Context(codingPath: document.codingPath(node), debugDescription: "Not \(R.self).")
            )
        }
        return typed
    }
}
