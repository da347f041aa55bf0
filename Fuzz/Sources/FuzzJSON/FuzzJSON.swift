// Fuzz target: the JSON tape decoder (`CurlewJSONDecoder`: `JSONTapeParser`, the tape, `TapeDecoder` and its
// containers, numbers, strings, keys and the strategies) against Foundation's `JSONDecoder` with the same
// settings.
//
// Input: byte 0 picks the shape decoded (`shapes` in Shapes.swift: two generic readers of any document,
// one probing a single-value container in turn and one calling every container method; integers of
// every width, floats, strings, dates, data, URLs, decimals, string- and integer-keyed dictionaries, and
// records of optional and required members); byte 1 the settings (`FuzzSettings`: keys as written,
// snake case or a custom strategy; non-conforming floats; every date and data strategy, custom ones
// included); the rest is the document.
//
// Oracles:
// 1. The tape parser accepts exactly what `ReferenceJSON` (RFC 8259 read by plain recursive descent, in
//    ReferenceJSON.swift) accepts. Both also refuse what Curlew deliberately hands to JSONDecoder:
//    unpaired surrogate escapes (`"\ud800"`; RFC 8259 leaves their meaning open) and nesting deeper than
//    512 (JSONDecoder's own limit); both skip one UTF-8 byte-order mark, as JSONDecoder does.
// 2. The same outcome as JSONDecoder: the same value, or an error of the same case, type and coding
//    path (messages are not compared); with custom strategies, the closures called with the same coding
//    paths in the same order. Values compare exactly: floating-point numbers and dates by bit
//    pattern (-0 is not 0, and the last bit of a rounding counts), strings by Unicode scalars (not by
//    `==`, which calls canonically equivalent strings equal), keys as the decoder reports them.
//
// Not differences, so not normalised (both decoders must agree): duplicate keys (the first wins), -0,
// numbers out of range or beyond Double's precision (correctly rounded; integers from 2^53 written with
// a fraction or exponent decided by JSONDecoder's Decimal path, which Curlew calls), top-level scalars,
// keys equal only under canonical equivalence (`"K"` is the Kelvin sign's key), and documents that are
// not strict JSON (BOM aside): invalid UTF-8, unpaired surrogates, control characters, trailing commas,
// nesting beyond 512. Curlew hands those to JSONDecoder, so oracle 2 holds there by construction and
// oracle 1 checks the hand-over.
//
// Intended differences, normalised:
// - `allKeys` order: Curlew's is the document's, JSONDecoder's its hash table's (it varies from run to
//   run). The generic readers sort the keys. `Dictionary.init(from:)`, used with keys as written, fills a
//   dictionary in `allKeys` order: when several members fail, which one the error names depends on the
//   order (two errors are then the same, see `Shape.outcomesMatch`), and `[Int: V]` with keys `1` and
//   `01` keeps whichever comes last (the `IntKeyed` shape reads integer keys in a fixed order instead).
// - A number that does not fit its type, caught inside a `Decodable`'s own `init(from:)`, is
//   JSONDecoder's internal parse error there and Curlew's `JSONNumberNotRepresentable`; both become the
//   same `DecodingError.dataCorrupted` (empty coding path) at the top. `errorShape` names no type for
//   errors that are not `DecodingError`s.
// - JSONDecoder refuses some zeros as `Double` or `Float` (`0e1`, `0E5`, `0.00e1`; see
//   `FoundationQuirks.refusesZero`, a bug in its underflow check); Curlew returns 0, as RFC 8259 reads
//   them. JSONDecoder is given such numbers as `0` (`-0`), which every type reads as the same value.
// - The generic readers skip documents nested deeper than 64: they probe every value with failing
//   decodes whose errors carry paths as long as the nesting, in both decoders, so 512 levels take
//   seconds. The typed shapes and oracle 1 still see any depth.

import Foundation
import FuzzSupport
import Synchronization

@testable import CurlewJSON

/// The entry point SwiftPM links as `main` (see `runFuzzer`).
@_cdecl("FuzzJSON_main")
public func fuzzJSONMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzJSON)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size >= 2 else { return 0 }
    let input = UnsafeBufferPointer(start: data, count: size)
    let shape = shapes[Int(input[0]) % shapes.count]
    let settings = FuzzSettings(input[1])
    let document = Array(input[2...])
    let json = Data(document)

    // 1. What the tape parser decodes itself is exactly strict JSON.
    let accepted = CurlewJSONDecoder.isStrictJSON(json)
    let reference = ReferenceJSON.isStrict(document)
    expect(
        accepted == reference,
        "the tape parser \(accepted ? "accepts" : "refuses") what RFC 8259 \(reference ? "accepts" : "refuses"): "
            + show(document))

    // 2. The same outcome as JSONDecoder (the generic readers skip deep documents, see the header).
    if let limit = shape.maximumNesting, nesting(of: document) > limit { return 0 }
    let foundation = settings.makeJSONDecoder()
    guard let curlew = CurlewJSONDecoder(settingsOf: foundation) else {
        expectationFailed("settings \(settings) not reproduced")
    }
    // Zeros JSONDecoder misreads (see `FoundationQuirks`) are respelled for it; Curlew reads the original.
    let foundationJSON = reference ? FoundationQuirks.rewritingMisreadZeros(document).map { Data($0) } ?? json : json
    let clock = ContinuousClock()
    let started = clock.now
    let expected = shape.run(foundation, foundationJSON)
    let between = clock.now
    let actual = shape.run(curlew, json)
    if showsOutcomes {
        print("\(shape.name) with \(settings), \(accepted ? "strict" : "not strict"): \(actual.outcome)")
        print("JSONDecoder \(between - started), Curlew \(clock.now - between)")
    }
    expect(
        shape.outcomesMatch(actual, expected, settings: settings),
        "\(shape.name) with \(settings), \(accepted ? "strict" : "not strict"): \(show(document))\n"
            + "  JSONDecoder: \(expected.outcome)\n  Curlew:      \(actual.outcome)")
    return 0
}

/// How deep arrays and objects nest in `document` (brackets in strings not counted).
private func nesting(of document: [UInt8]) -> Int {
    var depth = 0
    var deepest = 0
    var inString = false
    var escaped = false
    for byte in document {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            continue
        }
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            depth += 1
            deepest = max(deepest, depth)
        case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
        default: break
        }
    }
    return deepest
}

/// With `FUZZ_JSON_SHOW=1` in the environment, each outcome is printed (to read what a seed exercises).
private let showsOutcomes = ProcessInfo.processInfo.environment["FUZZ_JSON_SHOW"] == "1"

/// The document, for a message: as text when it is UTF-8, its bytes otherwise.
private func show(_ bytes: [UInt8]) -> String {
    let shown = bytes.prefix(600)
    if let text = String(validating: shown, as: UTF8.self) { return text.debugDescription }
    return shown.map { String($0, radix: 16) }.joined(separator: " ")
}

// MARK: - Settings

/// The JSONDecoder settings byte 1 chooses.
struct FuzzSettings: CustomStringConvertible {
    /// Bits 0–1: default keys, snake case, a custom strategy, default keys.
    let keys: UInt8
    /// Bit 2: non-conforming floats as the strings `inf`, `-inf` and `nan`.
    let nonConformingFloats: Bool
    /// Bits 3–4: deferred to `Date`, seconds and milliseconds since 1970, ISO 8601.
    let dates: UInt8
    /// Bit 5: deferred to `Data` instead of Base64.
    let deferredData: Bool
    /// Bit 6: a custom date strategy (`customDateStrategy`) instead of the one bits 3–4 choose.
    let customDates: Bool
    /// Bit 7: a custom data strategy (`customDataStrategy`) instead of the one bit 5 chooses.
    let customData: Bool

    /// Whether keys are used as written.
    var usesDefaultKeys: Bool { keys == 0 || keys == 3 }

    init(_ byte: UInt8) {
        keys = byte & 3
        nonConformingFloats = byte & 4 != 0
        dates = byte >> 3 & 3
        deferredData = byte & 32 != 0
        customDates = byte & 64 != 0
        customData = byte & 128 != 0
    }

    var description: String {
        "keys \(["default", "snake", "custom", "default"][Int(keys)]), floats \(nonConformingFloats ? "strings" : "throw"), "
            + "dates \(customDates ? "custom" : ["deferred", "seconds", "milliseconds", "iso8601"][Int(dates)]), "
            + "data \(customData ? "custom" : deferredData ? "deferred" : "base64")"
    }

    func makeJSONDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        switch keys {
        case 1: decoder.keyDecodingStrategy = .convertFromSnakeCase
        case 2: decoder.keyDecodingStrategy = .custom(customKeyStrategy)
        default: break
        }
        if nonConformingFloats {
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        }
        switch dates {
        case 1: decoder.dateDecodingStrategy = .secondsSince1970
        case 2: decoder.dateDecodingStrategy = .millisecondsSince1970
        case 3: decoder.dateDecodingStrategy = .iso8601
        default: decoder.dateDecodingStrategy = .deferredToDate
        }
        if customDates { decoder.dateDecodingStrategy = .custom(customDateStrategy) }
        decoder.dataDecodingStrategy = deferredData ? .deferredToData : .base64
        if customData { decoder.dataDecodingStrategy = .custom(customDataStrategy) }
        return decoder
    }
}

/// The calls of the custom strategies during one decode: which, and the coding path.
private let strategyCalls = Mutex<[String]>([])

/// The custom key strategy: records its path, then drops an `x-` prefix (so that `x-id` reaches `id`).
@Sendable private func customKeyStrategy(_ path: [any CodingKey]) -> any CodingKey {
    strategyCalls.withLock { $0.append("key " + pathShape(path)) }
    let key = path.last?.stringValue ?? ""
    return AnyKey(stringValue: key.hasPrefix("x-") ? String(key.dropFirst(2)) : key)
}

/// The custom date strategy: records its path; a number is seconds since 2001, a string its length in days
/// (through a nested `decode`, which must see the same decoder state).
@Sendable private func customDateStrategy(_ decoder: any Decoder) throws -> Date {
    strategyCalls.withLock { $0.append("date " + pathShape(decoder.codingPath)) }
    let container = try decoder.singleValueContainer()
    if let seconds = try? container.decode(Double.self) { return Date(timeIntervalSinceReferenceDate: seconds) }
    let text = try container.decode(String.self)
    return Date(timeIntervalSinceReferenceDate: Double(text.unicodeScalars.count) * 86_400)
}

/// The custom data strategy: records its path; an array of bytes, or a string's UTF-8 reversed.
@Sendable private func customDataStrategy(_ decoder: any Decoder) throws -> Data {
    strategyCalls.withLock { $0.append("data " + pathShape(decoder.codingPath)) }
    if var bytes = try? decoder.unkeyedContainer() {
        var data = Data()
        while !bytes.isAtEnd { data.append(try bytes.decode(UInt8.self)) }
        return data
    }
    return Data(try decoder.singleValueContainer().decode(String.self).utf8.reversed())
}

// MARK: - Outcomes

/// JSONDecoder and CurlewJSONDecoder, as one interface.
protocol FuzzDecoder {
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension JSONDecoder: FuzzDecoder {}
extension CurlewJSONDecoder: FuzzDecoder {}

/// One shape: a type decoded, and how its outcome is written for comparison.
struct Shape: Sendable {
    let name: String
    /// `T` holds a dictionary: see `outcomesMatch`.
    let membersInAnyOrder: Bool
    /// Decodes the document with the decoder; returns the outcome written out, and whether it is an error.
    let run: @Sendable (any FuzzDecoder, Data) -> (outcome: String, failed: Bool)

    /// The deepest nesting of arrays and objects this shape is decoded from (nil: any).
    let maximumNesting: Int?

    init<T: Decodable & SendableMetatype>(
        _ type: T.Type, membersInAnyOrder: Bool = false, maximumNesting: Int? = nil
    ) {
        name = "\(T.self)"
        self.membersInAnyOrder = membersInAnyOrder
        self.maximumNesting = maximumNesting
        run = { decoder, data in
            strategyCalls.withLock { $0.removeAll() }
            var outcome: String
            var failed = false
            do {
                outcome = "value " + canonical(try decoder.decode(T.self, from: data))
            } catch {
                outcome = "error " + errorShape(error)
                failed = true
            }
            let calls = strategyCalls.withLock { $0 }
            if !calls.isEmpty { outcome += "; strategies called: \(calls.joined(separator: ", "))" }
            return (outcome, failed)
        }
    }

    /// Whether two outcomes of this shape are the same. They must be equal, except for one intended
    /// difference: with keys used as written, `Dictionary.init(from:)` decodes the members of a dictionary
    /// in its container's `allKeys` order, which is the document's in Curlew and JSONDecoder's hash
    /// table's (varying from run to run) in JSONDecoder; when several members fail, which one the error
    /// is about depends on that order, so two errors are then the same. (With a key strategy, both
    /// decoders decode `[String: V]` themselves, in document order, and the errors must be equal.)
    func outcomesMatch(
        _ curlew: (outcome: String, failed: Bool), _ foundation: (outcome: String, failed: Bool),
        settings: FuzzSettings
    ) -> Bool {
        if curlew.outcome == foundation.outcome { return true }
        return membersInAnyOrder && settings.usesDefaultKeys && curlew.failed && foundation.failed
    }
}

/// A coding path as text: each key's string value, and its int value when it has one.
func pathShape(_ path: [any CodingKey]) -> String {
    path.map { key in key.intValue.map { "\(show(key.stringValue))#\($0)" } ?? show(key.stringValue) }
        .joined(separator: "/")
}

/// An error's case, type and coding path (not its message). Errors that are not `DecodingError`s are
/// not named: see the header on numbers that do not fit.
func errorShape(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "other" }
    switch error {
    case .dataCorrupted(let context): return "dataCorrupted @[\(pathShape(context.codingPath))]"
    case .keyNotFound(let key, let context):
        return "keyNotFound \(show(key.stringValue)) @[\(pathShape(context.codingPath))]"
    case .typeMismatch(let type, let context): return "typeMismatch \(type) @[\(pathShape(context.codingPath))]"
    case .valueNotFound(let type, let context): return "valueNotFound \(type) @[\(pathShape(context.codingPath))]"
    @unknown default: return "unknown"
    }
}

/// A string by its Unicode scalars: printable ASCII as it is, everything else as `\u{…}`.
func show(_ string: String) -> String {
    var shown = "\""
    for scalar in string.unicodeScalars {
        if scalar.value >= 0x20, scalar.value < 0x7F, scalar != "\"", scalar != "\\" {
            shown.unicodeScalars.append(scalar)
        } else {
            shown += "\\u{\(String(scalar.value, radix: 16))}"
        }
    }
    return shown + "\""
}

/// A value written so that two values are the same text exactly when they are the same: numbers and
/// dates by bit pattern, strings by scalars, dictionaries sorted, everything else through its mirror.
func canonical(_ value: Any) -> String {
    switch value {
    case let string as String: return show(string)
    case let double as Double: return "d:\(String(double.bitPattern, radix: 16))(\(double))"
    case let float as Float: return "f:\(String(float.bitPattern, radix: 16))(\(float))"
    case let date as Date:
        return "date:\(String(date.timeIntervalSinceReferenceDate.bitPattern, radix: 16))"
    case let data as Data: return "data:" + data.map { String($0, radix: 16) }.joined(separator: ".")
    case let decimal as Decimal: return "decimal:\(decimal)"
    case let url as URL: return "url:" + show(url.absoluteString)
    default: break
    }
    let mirror = Mirror(reflecting: value)
    switch mirror.displayStyle {
    case .optional:
        guard let wrapped = mirror.children.first else { return "nil" }
        return "some(" + canonical(wrapped.value) + ")"
    case .dictionary:
        return "[" + mirror.children.map { canonical($0.value) }.sorted().joined(separator: ", ") + "]"
    case .collection, .set:
        let elements = mirror.children.map { canonical($0.value) }
        return "[" + (mirror.displayStyle == .set ? elements.sorted() : elements).joined(separator: ", ") + "]"
    default:
        guard !mirror.children.isEmpty else { return String(describing: value) }
        let members = mirror.children.map { ($0.label.map { $0 + ": " } ?? "") + canonical($0.value) }
        return "\(type(of: value))(" + members.joined(separator: ", ") + ")"
    }
}
