// Curlew — a JSON decoder that behaves like a configured JSONDecoder, faster.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes JSON exactly as a `JSONDecoder` with the same settings would, in less time.
///
/// Values, errors (case and coding path) and strategy behaviour match JSONDecoder's. A document
/// that is not strict RFC 8259 JSON (JSONDecoder tolerates some of those, such as trailing commas)
/// is decoded by JSONDecoder itself, so such input gets JSONDecoder's exact outcome too. Settings
/// this decoder cannot reproduce make its initializer return nil; use `JSONDecoder` for those.
///
/// The decoder holds only immutable settings and is safe to share between tasks; every `decode`
/// works on its own state.
package struct CurlewJSONDecoder: Sendable {
    /// The reproduced settings.
    let options: JSONDecodingOptions
    /// The same settings, for the `JSONDecoder` that decodes documents that are not strict JSON.
    private let settings: JSONDecoderSettings

    /// A decoder reproducing `settings`, or nil when they cannot be reproduced exactly: `allowsJSON5`,
    /// `assumesTopLevelDictionary`, or a strategy case this code does not know.
    package init?(settings: JSONDecoderSettings) {
        guard let options = JSONDecodingOptions(settings) else { return nil }
        self.options = options
        self.settings = settings
    }

    /// A decoder reproducing these `JSONDecoder` settings, or nil when they cannot be reproduced
    /// exactly: `allowsJSON5`, `assumesTopLevelDictionary`, or a strategy case this code does not know.
    package init?(
        dateDecodingStrategy: JSONDecoder.DateDecodingStrategy = .deferredToDate,
        dataDecodingStrategy: JSONDecoder.DataDecodingStrategy = .base64,
        nonConformingFloatDecodingStrategy: JSONDecoder.NonConformingFloatDecodingStrategy = .throw,
        keyDecodingStrategy: JSONDecoder.KeyDecodingStrategy = .useDefaultKeys,
        userInfo: [CodingUserInfoKey: any Sendable] = [:],
        allowsJSON5: Bool = false,
        assumesTopLevelDictionary: Bool = false
    ) {
        var settings = JSONDecoderSettings()
        settings.dateDecodingStrategy = dateDecodingStrategy
        settings.dataDecodingStrategy = dataDecodingStrategy
        settings.nonConformingFloatDecodingStrategy = nonConformingFloatDecodingStrategy
        settings.keyDecodingStrategy = keyDecodingStrategy
        settings.userInfo = userInfo
        settings.allowsJSON5 = allowsJSON5
        settings.assumesTopLevelDictionary = assumesTopLevelDictionary
        self.init(settings: settings)
    }

    /// A decoder reproducing `decoder`'s current settings, or nil when they cannot be reproduced
    /// exactly. Later changes to `decoder` are not seen.
    package init?(settingsOf decoder: JSONDecoder) {
        self.init(settings: JSONDecoderSettings(of: decoder))
    }

    /// Decodes a value of `type` from JSON `data`, with the same result or error as JSONDecoder.
    package func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        guard let document = TapeDocument(parsing: data, options: options) else {
            // Not strict JSON: JSONDecoder decides, so its leniencies and its errors are kept.
            return try settings.makeJSONDecoder().decode(type, from: data)
        }
        return try decode(type, from: document, at: 0)
    }

    /// Decodes a value of `type` from the value at tape index `value` of a document parsed with
    /// ``options``; coding paths start at that value, as if it were the whole document.
    func decode<T: Decodable>(_ type: T.Type, from document: TapeDocument, at value: UInt32) throws -> T {
        let decoder = TapeDecoder(document: document, value: value, path: TapeDocument.rootPath)
        do {
            return try decoder.unwrap(value, as: type, parent: TapeDocument.rootPath, component: nil)
        } catch let error as JSONNumberNotRepresentable {
            throw error.dataCorrupted
        }
    }

    /// Whether `data` is strict RFC 8259 JSON within the nesting limit — what this decoder decodes
    /// itself; anything else goes to `JSONDecoder`.
    package static func isStrictJSON(_ data: Data) -> Bool {
        let count = data.count
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: count + JSONTapeParser.padding)
        defer { bytes.deallocate() }
        data.copyBytes(to: bytes, count: count)
        (bytes + count).initialize(repeating: 0, count: JSONTapeParser.padding)
        var builder = TapeBuilder(capacity: 16)
        defer { builder.deallocate() }
        return JSONTapeParser.parse(bytes, count: count, into: &builder)
    }
}
