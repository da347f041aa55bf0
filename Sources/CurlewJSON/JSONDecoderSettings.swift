// Curlew — a JSONDecoder's settings, taken once, and the one place a JSONDecoder is rebuilt from them.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The settings of a `JSONDecoder`: its strategies, user info and parsing options.
package struct JSONDecoderSettings: Sendable {
    /// How dates decode.
    package var dateDecodingStrategy: JSONDecoder.DateDecodingStrategy = .deferredToDate
    /// How `Data` decodes.
    package var dataDecodingStrategy: JSONDecoder.DataDecodingStrategy = .base64
    /// How non-finite floating-point values decode.
    package var nonConformingFloatDecodingStrategy: JSONDecoder.NonConformingFloatDecodingStrategy = .throw
    /// How object keys are matched to coding keys.
    package var keyDecodingStrategy: JSONDecoder.KeyDecodingStrategy = .useDefaultKeys
    /// The user info handed to `Decodable` types.
    package var userInfo: [CodingUserInfoKey: any Sendable] = [:]
    /// Whether JSON5 is accepted.
    package var allowsJSON5 = false
    /// Whether a top-level object may omit its braces.
    package var assumesTopLevelDictionary = false

    /// The settings of a plain `JSONDecoder()`.
    package init() {}

    /// The current settings of `decoder`; later changes to it are not seen.
    package init(of decoder: JSONDecoder) {
        dateDecodingStrategy = decoder.dateDecodingStrategy
        dataDecodingStrategy = decoder.dataDecodingStrategy
        nonConformingFloatDecodingStrategy = decoder.nonConformingFloatDecodingStrategy
        keyDecodingStrategy = decoder.keyDecodingStrategy
        userInfo = decoder.userInfo
        allowsJSON5 = decoder.allowsJSON5
        assumesTopLevelDictionary = decoder.assumesTopLevelDictionary
    }

    /// A new `JSONDecoder` with these settings.
    package func makeJSONDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = dateDecodingStrategy
        decoder.dataDecodingStrategy = dataDecodingStrategy
        decoder.nonConformingFloatDecodingStrategy = nonConformingFloatDecodingStrategy
        decoder.keyDecodingStrategy = keyDecodingStrategy
        // Settings left at their defaults are not set: every setter takes the decoder's lock.
        if !userInfo.isEmpty { decoder.userInfo = userInfo }
        if allowsJSON5 { decoder.allowsJSON5 = true }
        if assumesTopLevelDictionary { decoder.assumesTopLevelDictionary = true }
        return decoder
    }
}
