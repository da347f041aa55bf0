// Curlew — the JSONDecoder settings the tape decoder reproduces, decided once per configuration.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The subset of `JSONDecoder`'s settings that ``CurlewJSONDecoder`` reproduces exactly.
struct JSONDecodingOptions: Sendable {
    /// How dates decode.
    enum DateStrategy: Sendable {
        /// `Date`'s own `init(from:)` (seconds since 2001 as a number).
        case deferredToDate
        /// A number of seconds since 1970.
        case secondsSince1970
        /// A number of milliseconds since 1970.
        case millisecondsSince1970
        /// An ISO 8601 string.
        case iso8601
        /// The closure, given the decoder positioned at the value.
        case custom(@Sendable (any Decoder) throws -> Date)
    }

    /// How `Data` decodes.
    enum DataStrategy: Sendable {
        /// `Data`'s own `init(from:)` (an array of bytes).
        case deferredToData
        /// A Base64 string.
        case base64
        /// The closure, given the decoder positioned at the value.
        case custom(@Sendable (any Decoder) throws -> Data)
    }

    /// How object keys are matched to coding keys.
    enum KeyStrategy: Sendable {
        /// Keys as written.
        case useDefaultKeys
        /// Keys converted from snake case (``SnakeCaseKeys/convert(_:)``).
        case convertFromSnakeCase
        /// Keys converted by the closure, given the container's path plus the key.
        case custom(@Sendable ([any CodingKey]) -> any CodingKey)
    }

    /// The strings that stand for non-finite floating-point values, as UTF-8.
    struct NonConformingFloatStrings: Sendable {
        /// The spelling of `+infinity`.
        let positiveInfinity: [UInt8]
        /// The spelling of `-infinity`.
        let negativeInfinity: [UInt8]
        /// The spelling of NaN.
        let nan: [UInt8]
    }

    /// How dates decode.
    let dateStrategy: DateStrategy
    /// How `Data` decodes.
    let dataStrategy: DataStrategy
    /// How keys are matched.
    let keyStrategy: KeyStrategy
    /// How non-finite floating-point values are spelled; nil: they are an error (`.throw`).
    let nonConformingFloatStrings: NonConformingFloatStrings?
    /// The user info handed to `Decodable` types.
    let userInfo: [CodingUserInfoKey: any Sendable]

    /// Whether keys are used as they are (JSONDecoder then decodes `[String: V]` through
    /// `Dictionary`'s own `init(from:)`).
    var usesDefaultKeys: Bool {
        if case .useDefaultKeys = keyStrategy { return true }
        return false
    }
}

extension JSONDecodingOptions {
    /// The options for these JSONDecoder settings, or nil when one of them cannot be reproduced
    /// exactly (JSON5, an assumed top-level dictionary, a strategy this code does not know).
    init?(_ settings: JSONDecoderSettings) {
        // Both change what parses; JSONDecoder keeps those paths.
        guard !settings.allowsJSON5, !settings.assumesTopLevelDictionary else { return nil }
        switch settings.dateDecodingStrategy {
        case .deferredToDate: dateStrategy = .deferredToDate
        case .secondsSince1970: dateStrategy = .secondsSince1970
        case .millisecondsSince1970: dateStrategy = .millisecondsSince1970
        case .iso8601: dateStrategy = .iso8601
        case .custom(let closure): dateStrategy = .custom(closure)
        @unknown default: return nil
        }
        switch settings.dataDecodingStrategy {
        case .deferredToData: dataStrategy = .deferredToData
        case .base64: dataStrategy = .base64
        case .custom(let closure): dataStrategy = .custom(closure)
        @unknown default: return nil
        }
        switch settings.nonConformingFloatDecodingStrategy {
        case .throw:
            nonConformingFloatStrings = nil
        case .convertFromString(let positiveInfinity, let negativeInfinity, let nan):
            nonConformingFloatStrings = NonConformingFloatStrings(
                positiveInfinity: Array(positiveInfinity.utf8), negativeInfinity: Array(negativeInfinity.utf8),
                nan: Array(nan.utf8))
        @unknown default: return nil
        }
        switch settings.keyDecodingStrategy {
        case .useDefaultKeys: keyStrategy = .useDefaultKeys
        case .convertFromSnakeCase: keyStrategy = .convertFromSnakeCase
        case .custom(let closure): keyStrategy = .custom(closure)
        @unknown default: return nil
        }
        userInfo = settings.userInfo
    }

    /// The options of a plain `JSONDecoder()`.
    static let plain = JSONDecodingOptions(
        dateStrategy: .deferredToDate, dataStrategy: .base64, keyStrategy: .useDefaultKeys,
        nonConformingFloatStrings: nil, userInfo: [:])
}
