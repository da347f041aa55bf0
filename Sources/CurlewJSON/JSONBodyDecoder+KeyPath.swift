// Curlew — decoding the value at a dotted key path of a JSON body, parsed once.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension JSONBodyDecoder {
    /// Decodes `type` from the value at a dotted key path of JSON `data`, such as `"data.users"` or
    /// `"items.0.name"`: object keys, and element positions in arrays, as `JSONValue.value(atKeyPath:)`
    /// reads them. An empty key path is the whole document.
    ///
    /// The value decodes as the `JSONDecoder` would decode it were it the whole document: scalars
    /// decode too, and coding paths in errors start at the value.
    ///
    /// - Throws: ``JSONKeyPathError/notJSON`` when `data` is not JSON, ``JSONKeyPathError/noValue``
    ///   when nothing is at the key path, or the error decoding the value throws.
    package func decode<T: Decodable>(_ type: T.Type, from data: Data, atKeyPath keyPath: String) throws -> T {
        let tape: CurlewJSONDecoder? = if case .tape(let decoder) = strategy { decoder } else { nil }
        if let document = TapeDocument(parsing: data, options: tape?.options ?? .plain) {
            guard let value = document.value(atKeyPath: keyPath) else { throw JSONKeyPathError.noValue }
            if let tape { return try tape.decode(type, from: document, at: value) }
            return try decode(type, from: slice(of: data, document.byteRange(of: value)))
        }
        // JSONDecoder also reads documents with trailing commas; the value's bytes go to the decoder,
        // which decides how to read them.
        guard let document = TapeDocument(parsing: data, options: .plain, allowsTrailingCommas: true) else {
            throw JSONKeyPathError.notJSON
        }
        guard let value = document.value(atKeyPath: keyPath) else { throw JSONKeyPathError.noValue }
        return try decode(type, from: slice(of: data, document.byteRange(of: value)))
    }

    /// The bytes of `data` at `range`, offsets from its start, as a document of their own.
    private func slice(of data: Data, _ range: Range<Int>) -> Data {
        data.subdata(in: data.startIndex + range.lowerBound..<data.startIndex + range.upperBound)
    }
}
