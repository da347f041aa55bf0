// FuzzURL, part 1: `URLEncoding`'s query text for parameters built from the input.

import FuzzSupport

@testable import Curlew

/// The encodings the options byte picks.
func urlEncoding(_ options: UInt8, destination: URLEncoding.Destination) -> URLEncoding {
    let arrays: [URLEncoding.ArrayEncoding] = [.brackets, .noBrackets, .indexInBrackets]
    return URLEncoding(
        destination: destination, arrayEncoding: arrays[Int(options % 3)],
        boolEncoding: options & 4 == 0 ? .numeric : .literal)
}

/// The (key, value) texts `parameters` stand for, unescaped, in Curlew's documented order and syntax:
/// keys sorted at every level, `key[sub]` for objects, `key[]` / `key` / `key[i]` for arrays, `1`/`0` or
/// `true`/`false`, `String(describing:)` of numbers, an empty value for null. Written from the
/// documentation, not from `queryComponents`.
func expectedPairs(_ parameters: [String: JSONValue], _ encoding: URLEncoding) -> [(key: String, value: String)] {
    func flatten(_ key: String, _ value: JSONValue, into pairs: inout [(key: String, value: String)]) {
        switch value {
        case .object(let object):
            for nested in object.keys.sorted() {
                if let inner = object[nested] { flatten(key + "[" + nested + "]", inner, into: &pairs) }
            }
        case .array(let array):
            for (index, element) in array.enumerated() {
                switch encoding.arrayEncoding {
                case .brackets: flatten(key + "[]", element, into: &pairs)
                case .noBrackets: flatten(key, element, into: &pairs)
                case .indexInBrackets: flatten(key + "[" + String(index) + "]", element, into: &pairs)
                }
            }
        case .bool(let flag):
            let text = encoding.boolEncoding == .numeric ? (flag ? "1" : "0") : (flag ? "true" : "false")
            pairs.append((key, text))
        case .int(let number): pairs.append((key, number.description))
        // `description` (`nan`, `inf`, shortest round-trip digits), as `String(_:)` gives it.
        case .double(let number): pairs.append((key, number.description))
        case .string(let text): pairs.append((key, text))
        case .null: pairs.append((key, ""))
        }
    }
    var pairs: [(key: String, value: String)] = []
    for key in parameters.keys.sorted() {
        if let value = parameters[key] { flatten(key, value, into: &pairs) }
    }
    return pairs
}

/// Checks `query` (as `URLEncoding.query` wrote it) against `expected`: only unreserved bytes, `%XX`
/// (upper-case hex), and `=` / `&` as separators (brackets of nested keys are escaped too: `%5B`, `%5D`);
/// each side decodes to exactly the expected key path and value text.
func checkQuery(_ query: String, _ expected: [(key: String, value: String)], _ context: @autoclosure () -> String) {
    let bytes = Array(query.utf8)
    var index = 0
    while index < bytes.count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "%") {
            expect(
                index + 2 < bytes.count && [bytes[index + 1], bytes[index + 2]].allSatisfy { Bytes.isHex($0) && !(0x61...0x66).contains($0) },
                "a lone or lower-case escape at \(index) in \(Bytes.show(query)) (\(context()))")
            index += 3
            continue
        }
        expect(
            Bytes.isUnreserved(byte) || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "&"),
            "byte \(byte) unescaped at \(index) in \(Bytes.show(query)) (\(context()))")
        index += 1
    }
    guard !expected.isEmpty else {
        expect(query.isEmpty, "no pairs, yet a query: \(Bytes.show(query)) (\(context()))")
        return
    }
    let pieces = bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false)
    expect(
        pieces.count == expected.count,
        "\(pieces.count) pairs for \(expected.count) expected in \(Bytes.show(query)) (\(context()))")
    for (piece, pair) in zip(pieces, expected) {
        let sides = piece.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
        expect(sides.count == 2 && !sides[1].contains(UInt8(ascii: "=")), "pair without one `=`: \(Bytes.show(query))")
        let key = Bytes.percentDecoded(sides[0])
        let value = Bytes.percentDecoded(sides[1])
        expect(
            key == Array(pair.key.utf8),
            "key \(Bytes.show(pair.key)) came back as \(key.map { String(decoding: $0, as: UTF8.self) }.debugDescription) in \(Bytes.show(query)) (\(context()))")
        expect(
            value == Array(pair.value.utf8),
            "value \(Bytes.show(pair.value)) came back as \(value.map { String(decoding: $0, as: UTF8.self) }.debugDescription) in \(Bytes.show(query)) (\(context()))")
    }
}

/// Part 1: the parameters the rest of the input describes, in every encoding the options byte picks.
func fuzzQuery(options: UInt8, _ input: inout Input) {
    let parameters = input.parameters()
    let encoding = urlEncoding(options, destination: .queryString)
    let query = encoding.query(parameters)
    checkQuery(query, expectedPairs(parameters, encoding), "parameters \(parameters)")
}
