// Curlew — a JSONDecoder's settings, to give each decode its own decoder (or Curlew's faster one).

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CurlewJSON

/// The settings of a `JSONDecoder`, taken once, from which each decode gets a decoder.
///
/// A `JSONDecoder` guards its settings with a lock that every `decode` takes; shared by many concurrent
/// requests it becomes a point of contention (measured: the typed call ran at 0.78× of decoding with a
/// fresh decoder per call, at 64 requests in flight on 2 cores). Building a decoder is cheaper than that.
///
/// When ``CurlewJSONDecoder`` reproduces the settings exactly (decided once, here), decodes use it;
/// otherwise each decode gets a fresh `JSONDecoder` with the settings.
@usableFromInline
struct DecoderTemplate: Sendable {
    let dateDecodingStrategy: JSONDecoder.DateDecodingStrategy
    let dataDecodingStrategy: JSONDecoder.DataDecodingStrategy
    let nonConformingFloatDecodingStrategy: JSONDecoder.NonConformingFloatDecodingStrategy
    let keyDecodingStrategy: JSONDecoder.KeyDecodingStrategy
    let userInfo: [CodingUserInfoKey: any Sendable]
    let allowsJSON5: Bool
    let assumesTopLevelDictionary: Bool
    /// The faster decoder, when it can reproduce these settings.
    let fastDecoder: CurlewJSONDecoder?

    @usableFromInline
    init(_ decoder: JSONDecoder) {
        dateDecodingStrategy = decoder.dateDecodingStrategy
        dataDecodingStrategy = decoder.dataDecodingStrategy
        nonConformingFloatDecodingStrategy = decoder.nonConformingFloatDecodingStrategy
        keyDecodingStrategy = decoder.keyDecodingStrategy
        userInfo = decoder.userInfo
        allowsJSON5 = decoder.allowsJSON5
        assumesTopLevelDictionary = decoder.assumesTopLevelDictionary
        fastDecoder = CurlewJSONDecoder(
            dateDecodingStrategy: dateDecodingStrategy, dataDecodingStrategy: dataDecodingStrategy,
            nonConformingFloatDecodingStrategy: nonConformingFloatDecodingStrategy,
            keyDecodingStrategy: keyDecodingStrategy, userInfo: userInfo, allowsJSON5: allowsJSON5,
            assumesTopLevelDictionary: assumesTopLevelDictionary)
    }

    /// A new decoder with these settings.
    @usableFromInline
    func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = dateDecodingStrategy
        decoder.dataDecodingStrategy = dataDecodingStrategy
        decoder.nonConformingFloatDecodingStrategy = nonConformingFloatDecodingStrategy
        decoder.keyDecodingStrategy = keyDecodingStrategy
        if !userInfo.isEmpty { decoder.userInfo = userInfo }
        if allowsJSON5 { decoder.allowsJSON5 = true }
        if assumesTopLevelDictionary { decoder.assumesTopLevelDictionary = true }
        return decoder
    }

    /// Decodes `type` from `data` as a `JSONDecoder` with these settings would.
    @usableFromInline
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if let fastDecoder { return try fastDecoder.decode(type, from: data) }
        return try makeDecoder().decode(type, from: data)
    }
}

/// What decodes response bodies for one typed call: a template, or a caller's own decoder.
@usableFromInline
enum BodyDecoder {
    /// Settings taken from a `JSONDecoder`.
    case template(DecoderTemplate)
    /// A `JSONDecoder` subclass, used as it is: it may override `decode(_:from:)`.
    case instance(JSONDecoder)

    /// The body decoder for a caller's `JSONDecoder`: its settings, inspected now, unless it is a
    /// subclass.
    @usableFromInline
    init(_ decoder: JSONDecoder) {
        self = type(of: decoder) == JSONDecoder.self ? .template(DecoderTemplate(decoder)) : .instance(decoder)
    }

    /// Decodes `type` from `data`.
    @usableFromInline
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        switch self {
        case .template(let template): try template.decode(type, from: data)
        case .instance(let decoder): try decoder.decode(type, from: data)
        }
    }
}
