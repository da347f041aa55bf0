// Curlew — the tape JSON decoder against JSONDecoder: same input, same value or same kind of error.

import CurlewJSON
import Foundation
import Testing

// MARK: - Differential harness

/// What a decode produced, in comparable form: a value, or an error's case, type and coding path.
enum Outcome<T: Equatable>: Equatable, CustomStringConvertible {
    case value(T)
    case error(String)

    init(_ body: () throws -> T) {
        do {
            self = .value(try body())
        } catch {
            self = .error(errorShape(error))
        }
    }

    var description: String {
        switch self {
        case .value(let value): "value \(value)"
        case .error(let shape): "error \(shape)"
        }
    }
}

/// A coding path as text: each key's string value and int value.
func pathShape(_ path: [any CodingKey]) -> String {
    path.map { key in key.intValue.map { "\(key.stringValue)#\($0)" } ?? key.stringValue }.joined(separator: "/")
}

/// An error's case, type and coding path (messages may differ).
func errorShape(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "other \(type(of: error)): \(error)" }
    switch error {
    case .dataCorrupted(let context): return "dataCorrupted @[\(pathShape(context.codingPath))]"
    case .keyNotFound(let key, let context):
        return "keyNotFound \(key.stringValue) @[\(pathShape(context.codingPath))]"
    case .typeMismatch(let type, let context): return "typeMismatch \(type) @[\(pathShape(context.codingPath))]"
    case .valueNotFound(let type, let context): return "valueNotFound \(type) @[\(pathShape(context.codingPath))]"
    @unknown default: return "unknown \(error)"
    }
}

/// Decodes `json` with a JSONDecoder configured by `configure` and with the Curlew decoder made from
/// the same settings; returns both outcomes.
private func outcomes<T: Decodable & Equatable>(
    _ type: T.Type, _ data: Data, _ configure: (JSONDecoder) -> Void = { _ in }
) throws -> (foundation: Outcome<T>, curlew: Outcome<T>) {
    let foundation = JSONDecoder()
    configure(foundation)
    let curlew = try #require(CurlewJSONDecoder(settingsOf: foundation))
    return (Outcome { try foundation.decode(T.self, from: data) }, Outcome { try curlew.decode(T.self, from: data) })
}

/// Expects the same outcome from JSONDecoder and the Curlew decoder; returns it.
@discardableResult
private func expectSame<T: Decodable & Equatable>(
    _ type: T.Type, _ json: String, sourceLocation: SourceLocation = #_sourceLocation,
    _ configure: (JSONDecoder) -> Void = { _ in }
) throws -> Outcome<T> {
    try expectSame(type, Data(json.utf8), sourceLocation: sourceLocation, configure)
}

@discardableResult
private func expectSame<T: Decodable & Equatable>(
    _ type: T.Type, _ data: Data, sourceLocation: SourceLocation = #_sourceLocation,
    _ configure: (JSONDecoder) -> Void = { _ in }
) throws -> Outcome<T> {
    let (foundation, curlew) = try outcomes(type, data, configure)
    #expect(
        curlew == foundation, "input: \(String(decoding: data.prefix(200), as: UTF8.self))",
        sourceLocation: sourceLocation)
    return curlew
}

/// Expects the same outcome and that it is an error of the given shape.
private func expectError<T: Decodable & Equatable>(
    _ type: T.Type, _ json: String, _ shape: String, sourceLocation: SourceLocation = #_sourceLocation,
    _ configure: (JSONDecoder) -> Void = { _ in }
) throws {
    let outcome = try expectSame(type, json, sourceLocation: sourceLocation, configure)
    #expect(outcome == .error(shape), sourceLocation: sourceLocation)
}

// MARK: - Fixtures

private struct User: Codable, Equatable, Sendable {
    let id: Int
    let login: String
    let name: String
    let email: String
    let admin: Bool
    let score: Double
    let tags: [String]
}

/// The benchmark body: 121 small user objects, about 15 KB.
private var usersBody: Data { Data(usersBytes) }

/// Kept as bytes: a `Data` in a global holds its storage in an enum payload whose spare bits carry the
/// case, which LeakSanitizer cannot follow, so `make test-asan` would report it at exit.
private let usersBytes: [UInt8] = {
    var users: [String] = []
    for i in 1...121 {
        let score = Double(i) * 1.25
        let tags = i % 2 == 1 ? #"["a","b"]"# : #"["c"]"#
        let login = "user" + String(format: "%03d", i)
        users.append(
            #"{"id":\#(i),"login":"\#(login)","name":"User Number \#(i)","email":"user\#(i)@example.com","#
                + #""admin":\#(i % 7 == 0),"score":\#(score),"tags":\#(tags)}"#)
    }
    return Array("[\(users.joined(separator: ","))]".utf8)
}()

private struct Box<T: Decodable & Equatable>: Decodable, Equatable {
    let a: T
}

private struct Pair<A: Decodable & Equatable, B: Decodable & Equatable>: Decodable, Equatable {
    let first: A
    let second: B
}

private enum Color: String, Decodable, Equatable {
    case red, green
}

private enum Level: Int, Decodable, Equatable {
    case low = 1
    case high = 2
}

private struct Profile: Decodable, Equatable {
    struct Address: Decodable, Equatable {
        let street: String
        let zip: String?
    }
    let name: String
    let nickname: String?
    let age: Int?
    let color: Color
    let level: Level?
    let addresses: [Address]
    let matrix: [[Int]]
    let scores: [String: Double]
    let nested: [String: [Address]]?
}

/// A class hierarchy decoding through `superDecoder()`.
private class Animal: Decodable, Equatable {
    let name: String
    enum CodingKeys: String, CodingKey { case name }
    required init(from decoder: any Decoder) throws {
        name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
    }
    static func == (lhs: Animal, rhs: Animal) -> Bool { lhs.isEqual(to: rhs) }
    func isEqual(to other: Animal) -> Bool { name == other.name }
}

private final class Dog: Animal {
    let barks: Int
    enum DogKeys: String, CodingKey { case barks, animal }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DogKeys.self)
        barks = try container.decode(Int.self, forKey: .barks)
        try super.init(from: container.superDecoder(forKey: .animal))
    }
    override func isEqual(to other: Animal) -> Bool {
        guard let other = other as? Dog else { return false }
        return barks == other.barks && super.isEqual(to: other)
    }
}

private final class Cat: Animal {
    let lives: Int
    enum CatKeys: String, CodingKey { case lives }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CatKeys.self)
        lives = try container.decode(Int.self, forKey: .lives)
        // `super` key: absent here, so the super-decoder sees null; present in other inputs.
        try super.init(from: container.superDecoder())
    }
    override func isEqual(to other: Animal) -> Bool {
        guard let other = other as? Cat else { return false }
        return lives == other.lives && super.isEqual(to: other)
    }
}

/// Reads everything by hand: nested containers, unkeyed positions, nil checks, super-decoders.
private struct Manual: Decodable, Equatable {
    var log: [String] = []

    struct AnyKey: CodingKey {
        let stringValue: String
        let intValue: Int?
        init(stringValue: String) {
            self.stringValue = stringValue
            intValue = nil
        }
        init(intValue: Int) {
            stringValue = "\(intValue)"
            self.intValue = intValue
        }
    }

    init(from decoder: any Decoder) throws {
        let root = try decoder.container(keyedBy: AnyKey.self)
        log.append("keys \(root.allKeys.map(\.stringValue).sorted())")
        log.append(
            "contains list \(root.contains(AnyKey(stringValue: "list"))) missing \(root.contains(AnyKey(stringValue: "missing")))"
        )
        log.append("nil \(try root.decodeNil(forKey: AnyKey(stringValue: "nothing")))")
        var list = try root.nestedUnkeyedContainer(forKey: AnyKey(stringValue: "list"))
        log.append("count \(list.count ?? -1) at \(list.currentIndex) end \(list.isAtEnd)")
        log.append("nil? \(try list.decodeNil()) at \(list.currentIndex)")
        log.append("int \(try list.decode(Int.self))")
        let inner = try list.nestedContainer(keyedBy: AnyKey.self)
        log.append("inner \(try inner.decode(String.self, forKey: AnyKey(stringValue: "x")))")
        var deeper = try list.nestedUnkeyedContainer()
        log.append("deeper \(try deeper.decode(Bool.self)) \(try deeper.decodeIfPresent(Int.self) as Int?)")
        let superDecoder = try list.superDecoder()
        log.append(
            "super \(try superDecoder.singleValueContainer().decode(String.self)) path \(pathShape(superDecoder.codingPath))"
        )
        log.append(
            "ifPresent at end \(try list.decodeIfPresent(String.self) as String?) index \(list.currentIndex) end \(list.isAtEnd)"
        )
        log.append("ifPresent again \(try list.decodeIfPresent(Int.self) as Int?) index \(list.currentIndex)")
        let object = try root.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(stringValue: "object"))
        log.append(
            "object path \(pathShape(object.codingPath)) \(try object.decode(Double.self, forKey: AnyKey(stringValue: "d")))"
        )
        let single = try root.superDecoder(forKey: AnyKey(stringValue: "single")).singleValueContainer()
        log.append("single \(try single.decode(UInt8.self)) nil \(single.decodeNil())")
        let absent = try root.superDecoder(forKey: AnyKey(stringValue: "absent"))
        log.append("absent nil \(try absent.singleValueContainer().decodeNil()) path \(pathShape(absent.codingPath))")
        log.append("decoder path \(pathShape(decoder.codingPath))")
    }
}

/// Any JSON value, through `allKeys` and single-value probing (as generic JSON models do); errors
/// are deterministic (unlike `JSONValue`'s, whose object members decode in `allKeys` order).
indirect enum Tree: Decodable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([Tree])
    case object([String: Tree])

    init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int.self) {
            self = .int(value)
        } else if let value = try? single.decode(Double.self) {
            self = .double(value)
        } else if let value = try? single.decode(String.self) {
            self = .string(value)
        } else if var array = try? decoder.unkeyedContainer() {
            var elements: [Tree] = []
            while !array.isAtEnd { elements.append(try array.decode(Tree.self)) }
            self = .array(elements)
        } else {
            let object = try decoder.container(keyedBy: Manual.AnyKey.self)
            var members: [String: Tree] = [:]
            // Sorted: JSONDecoder's `allKeys` order is its dictionary's, which varies between decodes.
            for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                members[key.stringValue] = try object.decode(Tree.self, forKey: key)
            }
            self = .object(members)
        }
    }
}

/// The keys (as converted by the strategy) and Int values of an object.
private struct KeyProbe: Decodable, Equatable {
    let members: [String: Int]
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Manual.AnyKey.self)
        var members: [String: Int] = [:]
        for key in container.allKeys { members[key.stringValue] = try container.decode(Int.self, forKey: key) }
        members["<count>"] = container.allKeys.count
        self.members = members
    }
}

/// A Double compared by bit pattern (so -0 and 0 differ).
private struct Bits: Decodable, Equatable, CustomStringConvertible {
    let bits: UInt64
    init(from decoder: any Decoder) throws {
        bits = try decoder.singleValueContainer().decode(Double.self).bitPattern
    }
    var description: String { "\(Double(bitPattern: bits))" }
}

private struct FloatBits: Decodable, Equatable {
    let bits: UInt32
    init(from decoder: any Decoder) throws {
        bits = try decoder.singleValueContainer().decode(Float.self).bitPattern
    }
}

// MARK: - Tests

@Suite struct JSONDecodingTests {
    @Test func benchmarkBodyDecodesIdentically() throws {
        #expect(usersBody.count > 14_000)
        let outcome = try expectSame([User].self, usersBody)
        guard case .value(let users) = outcome else {
            Issue.record("no value")
            return
        }
        #expect(users.count == 121)
        #expect(
            users[6]
                == User(
                    id: 7, login: "user007", name: "User Number 7", email: "user7@example.com", admin: true,
                    score: 8.75, tags: ["a", "b"]))
    }

    @Test func strictParserRefusesWhatRFC8259Refuses() {
        let refused: [String] = [
            "", " ", "[1,2,]", #"{"a":1,}"#, "[1,,2]", "[,1]", "// c\n[1]", "/* c */ [1]", "[01]", "[-01]", "[00]",
            "[1.]",
            "[.5]", "[1e]", "[1e+]", "[-]", "[+1]", "[0x10]", "[NaN]", "[Infinity]", "[-Infinity]", "['a']", #"{a:1}"#,
            #"{"a" 1}"#, #"{"a":1 "b":2}"#, "[1 2]", "[1]]", "[[1]", "{", "}", #"["a"#, #"["\x"]"#, #"["\u12"]"#,
            #"["\u12g4"]"#, #"["\ud800"]"#, #"["\udc00"]"#, #"["\ud800\u0041"]"#, #"["\ud800x"]"#, "[tru]", "[nul]",
            "[falsey]", "[true false]", "1 2", "[1] x", "\"a\u{1}\"", "\"tab\there\"", "\"line\nbreak\"", "\u{FFFE}[1]",
        ]
        for json in refused {
            #expect(!CurlewJSONDecoder.isStrictJSON(Data(json.utf8)), "accepted: \(json)")
        }
        let invalidUTF8: [[UInt8]] = [
            [0x22, 0xC3, 0x22], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
            [0x22, 0xFF, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x5B, 0x31, 0x00, 0x5D],
            [0xFE, 0xFF, 0x00, 0x5B, 0x00, 0x5D],
            [0x22, 0x80, 0x22], [0x22, 0xF8, 0x88, 0x80, 0x80, 0x80, 0x22],
        ]
        for bytes in invalidUTF8 {
            #expect(!CurlewJSONDecoder.isStrictJSON(Data(bytes)), "accepted: \(bytes)")
        }
        let accepted: [String] = [
            "0", "-0", "1.5e-3", "1E+2", " true ", "null", #""""#, #""\"\\\/\b\f\n\r\t\u0000\u00e9\ud83d\ude00""#, "[]",
            "{}",
            #"{"a":[{},[],null]}"#, " \n\t\r[1] \n", "\"é😀\"", #"{"":0}"#,
        ]
        for json in accepted {
            #expect(CurlewJSONDecoder.isStrictJSON(Data(json.utf8)), "refused: \(json)")
        }
        // A UTF-8 byte-order mark is skipped, as JSONDecoder skips it.
        #expect(CurlewJSONDecoder.isStrictJSON(Data([0xEF, 0xBB, 0xBF, 0x5B, 0x31, 0x5D])))
    }

    @Test func documentsJSONDecoderToleratesOrRefusesGetItsOutcome() throws {
        // Refused by the strict parser and handed to JSONDecoder: the outcome is exactly its.
        let inputs: [String] = [
            "[1,2,]", #"{"a":1,}"#, "[01]", #"{"a":1,"b":01}"#, "{\"a\":1,\"b\":\"\u{1}\"}", #"{"a":1,"b":"\ud800"}"#,
            #"{"a":"\ud800"}"#, "[1] x", "", "  ", "[1", "nul", #"{"a":1 // no"#, "[1e400,", "\u{FEFF}[1,2]",
        ]
        for json in inputs {
            try expectSame(Box<Int>.self, json)
            try expectSame([Int].self, json)
        }
        try expectSame([Int].self, Data([0xFE, 0xFF, 0x00, 0x5B, 0x00, 0x31, 0x00, 0x5D]))
        try expectSame(String.self, Data([0x22, 0xC3, 0x28, 0x22]))
    }

    @Test func hostileNestingNeverCrashes() throws {
        // Shallow target types keep the decoding itself from recursing; the parsing sees every level.
        for depth in [511, 512, 513, 5_000, 100_000] {
            let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            #expect(CurlewJSONDecoder.isStrictJSON(Data(arrays.utf8)) == (depth <= 512))
            try expectSame([Int].self, arrays)
            let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
            #expect(CurlewJSONDecoder.isStrictJSON(Data(objects.utf8)) == (depth <= 512))
            try expectSame(Box<Int>.self, objects)
        }
        let unclosed = String(repeating: "[", count: 200_000)
        try expectSame([Int].self, unclosed)
    }

    @Test func shapesDecodeIdentically() throws {
        let profile = #"""
            {"name":"Ada","nickname":null,"color":"green","level":2,
             "addresses":[{"street":"1 Main","zip":"12345"},{"street":"2 Side"}],
             "matrix":[[1,2],[],[3]],"scores":{"math":1.5,"art":-0.25,"":0},
             "nested":{"home":[{"street":"x","zip":null}]}}
            """#
        try expectSame(Profile.self, profile)
        try expectSame(
            [Pair<Int, [Pair<String, Double?>]>].self,
            #"[{"first":1,"second":[{"first":"x","second":null},{"first":"y","second":2}]}]"#)
        try expectSame([[[String]]].self, #"[[["a"],[]],[],[["b","c"]]]"#)
        try expectError([[String]].self, #"[["a"],["b",1]]"#, "typeMismatch String @[Index 1#1/Index 1#1]")
        try expectError([[String]].self, #"[["a"],null]"#, "valueNotFound Array<Any> @[Index 1#1]")
        try expectError([[String]].self, #"[["a"],{}]"#, "typeMismatch Array<Any> @[Index 1#1]")
        try expectError(Box<[Int?]>.self, #"{"a":[1,null,"x"]}"#, "typeMismatch Int @[a/Index 2#2]")
        try expectSame([Int8].self, "[1,2,3]")
        try expectSame([Bool].self, "[true,false]")
        try expectSame([Double].self, "[1,2.5,-0]")
        try expectSame([[Box<Int>]].self, #"[[{"a":1}],[]]"#)
        try expectSame([String: [Int]].self, #"{"a":[1],"b":[],"c":[2,3]}"#)
        try expectSame([Int: String].self, #"{"1":"a","-2":"b","30":"c"}"#)
        try expectError([Int: String].self, #"{"1":"a","x":"b"}"#, "typeMismatch Int @[x]")
        try expectSame([Color].self, #"["red","green"]"#)
        try expectError([Color].self, #"["red","blue"]"#, "dataCorrupted @[Index 1#1]")
        try expectError(Box<Level>.self, #"{"a":3}"#, "dataCorrupted @[a]")
        try expectSame([Int?].self, "[1,null,3]")
        try expectSame(Box<[String: Int?]>.self, #"{"a":{"x":null,"y":1}}"#)
        try expectSame(Int.self, " 42 ")
        try expectSame(String.self, #""top""#)
        try expectSame(Bool?.self, "null")
        try expectSame(Tree.self, #"{"a":[1,true,null,"x",2.5,{"b":{}},-0,1e2,18446744073709551616]}"#)
    }

    @Test func optionalsMissingAndNullAreNil() throws {
        struct Options: Decodable, Equatable {
            let s: String?
            let i: Int?
            let b: Bool?
            let d: Double?
            let u: UInt8?
            let list: [Int]?
        }
        try expectSame(Options.self, "{}")
        try expectSame(Options.self, #"{"s":null,"i":null,"b":null,"d":null,"u":null,"list":null}"#)
        try expectSame(Options.self, #"{"s":"x","i":-1,"b":false,"d":0.5,"u":255,"list":[]}"#)
        try expectError(Options.self, #"{"u":256}"#, "dataCorrupted @[]")
        try expectError(Options.self, #"{"s":1}"#, "typeMismatch String @[s]")
        try expectError(Options.self, #"{"b":"true"}"#, "typeMismatch Bool @[b]")
        try expectError(Options.self, #"{"list":{}}"#, "typeMismatch Array<Any> @[list]")
    }

    @Test func classHierarchiesAndSuperDecoders() throws {
        try expectSame(Dog.self, #"{"barks":3,"animal":{"name":"Rex"}}"#)
        try expectError(Dog.self, #"{"barks":3}"#, "valueNotFound Dictionary<String, Any> @[animal]")
        try expectError(Cat.self, #"{"lives":9,"name":"Tom"}"#, "valueNotFound Dictionary<String, Any> @[super]")
        try expectSame(Cat.self, #"{"lives":9,"super":{"name":"Tom"}}"#)
        try expectSame(
            Manual.self,
            #"""
            {"nothing":null,"list":[null,7,{"x":"in"},[true,null],"sup"],"object":{"d":2.5},"single":200}
            """#)
        try expectError(Manual.self, #"{"list":[]}"#, "keyNotFound nothing @[]")
        try expectError(Manual.self, #"{"nothing":1,"list":[]}"#, "valueNotFound Never @[list/Index 0#0]")
        try expectError(
            Manual.self, #"{"nothing":1,"list":[1]}"#, "valueNotFound KeyedDecodingContainer<AnyKey> @[list/Index 1#1]")
        try expectError(
            Manual.self, #"{"nothing":1,"list":[1,2]}"#, "typeMismatch Dictionary<String, Any> @[list/Index 1#1]")
        try expectError(
            Manual.self, #"{"nothing":1,"list":[1,2,{"x":"a"}]}"#,
            "typeMismatch Dictionary<String, Any> @[list/Index 1#1]")
        try expectError(
            Manual.self, #"{"nothing":1,"list":[1,{"x":"a"}]}"#,
            "valueNotFound UnkeyedDecodingContainer @[list/Index 2#2]")
        try expectError(
            Manual.self, #"{"nothing":1,"list":[1,{"x":"a"},[true]]}"#, "valueNotFound Decoder @[list/Index 3#3]")
        try expectError(
            Manual.self, #"{"nothing":1,"list":[1,{"x":"a"},[true,1]]}"#, "valueNotFound Decoder @[list/Index 3#3]")
        try expectError(
            Manual.self, #"{"nothing":1,"list":[1,{"x":"a"},null,[]]}"#,
            "valueNotFound Array<Any> @[list/Index 2#2]")
        try expectError(
            Manual.self, #"{"nothing":1,"list":[1,{"x":"a"},[true,1],"s"]}"#, "keyNotFound object @[]")
        try expectError(
            Manual.self, #"{"nothing":1,"list":[1,{"x":"a"},[true,1],"s"],"object":[]}"#,
            "typeMismatch Dictionary<String, Any> @[object]")
    }

    @Test func integersEveryWidthAndOverflow() throws {
        func check<T: Decodable & Equatable & FixedWidthInteger>(_ type: T.Type) throws {
            let values = [
                "\(T.max)", "\(T.min)", "0", "-0", "1", "-1", "1.0", "1e2", "1E1", "1.5", "-0.0", "0e5", "1e-2",
            ]
            let widened = ["\(T.max)0", "1\(T.max)", "-1\(T.max)", "\(Int128(T.max) + 1)", "\(Int128(T.min) - 1)"]
            for value in values + widened {
                try expectSame(T.self, value)
                try expectSame(Box<T>.self, #"{"a":\#(value)}"#)
                try expectSame([T].self, "[\(value)]")
            }
        }
        try check(Int.self)
        try check(Int8.self)
        try check(Int16.self)
        try check(Int32.self)
        try check(Int64.self)
        try check(UInt.self)
        try check(UInt8.self)
        try check(UInt16.self)
        try check(UInt32.self)
        try check(UInt64.self)
        try expectError(Box<Int8>.self, #"{"a":128}"#, "dataCorrupted @[]")
        try expectError([UInt].self, "[-1]", "dataCorrupted @[]")
        try expectError(Box<Int>.self, #"{"a":1.5}"#, "dataCorrupted @[]")
        try expectError(Box<Int>.self, #"{"a":"1"}"#, "typeMismatch Int @[a]")
        try expectError(Box<Int>.self, #"{"a":null}"#, "valueNotFound Int @[a]")
        try expectError(Box<Int>.self, #"{"a":true}"#, "typeMismatch Int @[a]")
        // JSONDecoder goes through Double (and Decimal from 2^53), with its rounding.
        for value in [
            "1.0000000000000001", "9007199254740993.0", "9007199254740993.5", "9223372036854775807.0",
            "9.2233720368547758e18",
            "1e19", "18446744073709551615.0", "1e400", "-9223372036854775809", "123456789012345678901234567890",
        ] {
            try expectSame(Int.self, value)
            try expectSame(UInt64.self, value)
            try expectSame(Int32.self, value)
        }
        for value in [
            "\(Int128.max)", "\(Int128.min)", "\(UInt128.max)", "170141183460469231731687303715884105728", "1e20", "-1",
            "1e38",
        ] {
            try expectSame(Box<Int128>.self, #"{"a":\#(value)}"#)
            try expectSame(Box<UInt128>.self, #"{"a":\#(value)}"#)
            try expectSame([Int128].self, "[\(value)]")
            try expectSame(UInt128.self, value)
        }
    }

    @Test func floatingPointIsCorrectlyRounded() throws {
        let values = [
            "0", "-0", "-0.0", "0.0e10", "1", "-1.5", "0.1", "1e22", "1e23", "1.7976931348623157e308",
            "1.7976931348623159e308",
            "1e309", "-1e309", "4.9e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-400", "0e-400",
            "9007199254740993", "9007199254740992.5", "123456789012345678901234567890",
            "0.1000000000000000055511151231257827021181583404541015625",
            "2.2250738585072011e-308", "2.2250738585072012e-308", "3.141592653589793238462643383279", "1E5", "1e+5",
            "1e-5",
            "0.000001234", "12345678901234567890e-10", "7.038531e-26", "8.589973e9", "1.00000005960464477539062499",
            "3.4028235e38", "3.4028236e38", "1.17549435e-38", "1e-46", "1.401298464324817e-45", "16777217",
        ]
        for value in values {
            try expectSame(Bits.self, value)
            try expectSame(FloatBits.self, value)
            try expectSame(Box<Double>.self, #"{"a":\#(value)}"#)
            try expectSame(Box<Float>.self, #"{"a":\#(value)}"#)
        }
        // Random doubles through their shortest and long representations.
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<2_000 {
            let double = Double(bitPattern: generator.next() & 0x7FEF_FFFF_FFFF_FFFF)
            try expectSame(Bits.self, "\(double)")
            try expectSame(Bits.self, String(format: "%.25e", double))
            let float = Float(bitPattern: UInt32.random(in: 0...0x7F7F_FFFF, using: &generator))
            try expectSame(FloatBits.self, "\(float)")
            try expectSame(FloatBits.self, String(format: "%.12e", Double(float)))
        }
        try expectError(Box<Double>.self, #"{"a":1e400}"#, "dataCorrupted @[]")
        try expectError(Box<Float>.self, #"{"a":1e39}"#, "dataCorrupted @[]")
        try expectError(Box<Double>.self, #"{"a":"1"}"#, "typeMismatch Double @[a]")
        try expectError(Box<Float>.self, #"{"a":null}"#, "valueNotFound Float @[a]")
    }

    @Test func decimalsMatchJSONDecoder() throws {
        for value in [
            "0", "-0", "12.50", "1e-200", "1e200", "123456789012345678901234567890123456789012345", "-1.5e3", "0.0001",
            "3.14159265358979323846264338327950288", "1e127", "1e-128", "99999999999999999999999999999999999999",
        ] {
            let outcome = try expectSame(Box<Decimal>.self, #"{"a":\#(value)}"#)
            if case .value(let box) = outcome {
                let foundation = try JSONDecoder().decode(Box<Decimal>.self, from: Data(#"{"a":\#(value)}"#.utf8))
                #expect(box.a.description == foundation.a.description)
            }
        }
        try expectError(Box<Decimal>.self, #"{"a":"1"}"#, "typeMismatch Decimal @[a]")
        try expectError(Box<Decimal>.self, #"{"a":null}"#, "valueNotFound Decimal @[a]")
    }

    @Test func stringsAndEscapes() throws {
        let strings = [
            #""plain""#, #""""#, #""\"\\\/\b\f\n\r\t""#, #""\u0000\u001f\u007f\u0080\u07ff\u0800\uffff""#,
            #""\ud83d\ude00 \uD834\uDD1E""#, "\"é ü 中文 😀\"", #""mixed \u00e9 é\n""#, #""a\u0301""#,
            "\"" + String(repeating: "long ", count: 1_000) + "\"",
            "\"" + String(repeating: "\\u00e9", count: 300) + "\"",
        ]
        for json in strings {
            try expectSame(String.self, json)
            try expectSame([String].self, "[\(json),\(json)]")
            try expectSame(Box<String>.self, #"{"a":\#(json)}"#)
        }
        try expectError(Box<String>.self, #"{"a":null}"#, "valueNotFound String @[a]")
        try expectError([String].self, #"["a",2]"#, "typeMismatch String @[Index 1#1]")
    }

    @Test func keysWithEscapesUnicodeAndDuplicates() throws {
        try expectSame(Box<Int>.self, #"{"\u0061":1}"#)
        try expectSame(Box<Int>.self, #"{"a":1,"a":2}"#)
        try expectSame(Box<Int>.self, #"{"a":1,"\u0061":2}"#)
        try expectSame(Box<Int>.self, #"{"b":0,"a":1,"c":3,"a":2}"#)
        try expectSame([String: Int].self, #"{"a":1,"a":2,"b":3}"#)
        try expectSame(KeyProbe.self, #"{"x":1,"x":2,"y":3}"#)
        struct Unicode: Decodable, Equatable {
            let café: Int
            let kelvin: Int
            enum CodingKeys: String, CodingKey {
                case café
                case kelvin = "\u{212A}"
            }
        }
        // Canonically equivalent keys match, as Swift strings (and JSONDecoder's dictionary) compare.
        try expectSame(Unicode.self, #"{"cafe\u0301":1,"K":2}"#)
        try expectSame(Unicode.self, "{\"café\":1,\"\u{212A}\":2}")
        try expectSame(Unicode.self, "{\"café\":1,\"K\":2}")
        // A large object (hashed uniqueness check), with and without a duplicate.
        let many = (0..<40).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        try expectSame(KeyProbe.self, "{\(many)}")
        try expectSame(KeyProbe.self, #"{\#(many),"k7":99}"#)
        try expectSame([String: Int].self, #"{\#(many),"k7":99}"#)
    }

    @Test func dateStrategies() throws {
        struct Event: Decodable, Equatable {
            let at: Date
            let later: Date?
        }
        try expectSame(Event.self, #"{"at":1000.5,"later":null}"#)
        try expectError(Event.self, #"{"at":"x"}"#, "typeMismatch Double @[at]")
        try expectSame(Event.self, #"{"at":1700000000,"later":-1.5}"#) { $0.dateDecodingStrategy = .secondsSince1970 }
        try expectSame(Event.self, #"{"at":1700000000123}"#) { $0.dateDecodingStrategy = .millisecondsSince1970 }
        try expectError(Event.self, #"{"at":null}"#, "valueNotFound Date @[at]") {
            $0.dateDecodingStrategy = .secondsSince1970
        }
        try expectError(Event.self, #"{"at":"1"}"#, "typeMismatch Double @[at]") {
            $0.dateDecodingStrategy = .secondsSince1970
        }
        let iso: (JSONDecoder) -> Void = { $0.dateDecodingStrategy = .iso8601 }
        try expectSame(Event.self, #"{"at":"2024-02-29T12:34:56Z","later":"2024-03-01T00:00:00+02:00"}"#, iso)
        try expectError(Event.self, #"{"at":"2024-02-29"}"#, "dataCorrupted @[]", iso)
        try expectError(
            [Box<Date>].self, #"[{"a":"2024-02-29T12:34:56Z"},{"a":"nope"}]"#, "dataCorrupted @[Index 1#1]", iso)
        try expectError(Event.self, #"{"at":5}"#, "typeMismatch String @[at]", iso)
        // Inside an array, JSONDecoder reports the array's path (its decoder's current path).
        try expectError(Box<[Date]>.self, #"{"a":["2024-02-29T12:34:56Z","nope"]}"#, "dataCorrupted @[a]", iso)
        try expectError([[Date]].self, #"[["2024-02-29T12:34:56Z"],["nope"]]"#, "dataCorrupted @[Index 1#1]", iso)
        try expectSame(Date.self, #""2024-02-29T12:34:56Z""#, iso)
        let custom: (JSONDecoder) -> Void = {
            $0.dateDecodingStrategy = .custom { decoder in
                let text = try decoder.singleValueContainer().decode(String.self)
                guard let seconds = Double(text) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "bad"))
                }
                return Date(timeIntervalSince1970: seconds + Double(decoder.codingPath.count))
            }
        }
        try expectSame([Box<Date>].self, #"[{"a":"10"},{"a":"20.5"}]"#, custom)
        try expectError([Box<Date>].self, #"[{"a":"10"},{"a":"x"}]"#, "dataCorrupted @[Index 1#1/a]", custom)
    }

    @Test func dataStrategies() throws {
        try expectSame(Box<Data>.self, #"{"a":"aGVsbG8="}"#)
        try expectSame(Box<Data>.self, #"{"a":""}"#)
        try expectSame(Box<Data>.self, #"{"a":"aGVs\/bG8="}"#)
        try expectError(Box<Data>.self, #"{"a":"aGVsbG8"}"#, "dataCorrupted @[a]")
        try expectError(Box<Data>.self, #"{"a":"a b"}"#, "dataCorrupted @[a]")
        try expectError(Box<Data>.self, #"{"a":[1]}"#, "typeMismatch String @[a]")
        try expectError(Box<Data>.self, #"{"a":null}"#, "valueNotFound Data @[a]")
        let deferred: (JSONDecoder) -> Void = { $0.dataDecodingStrategy = .deferredToData }
        try expectSame(Box<Data>.self, #"{"a":[1,2,255]}"#, deferred)
        try expectError(Box<Data>.self, #"{"a":[1,256]}"#, "dataCorrupted @[]", deferred)
        try expectError(Box<Data>.self, #"{"a":"aGVsbG8="}"#, "typeMismatch Array<Any> @[a]", deferred)
        let custom: (JSONDecoder) -> Void = {
            $0.dataDecodingStrategy = .custom { decoder in
                Data(
                    try decoder.singleValueContainer().decode(String.self).utf8.reversed() + [
                        UInt8(decoder.codingPath.count)
                    ])
            }
        }
        try expectSame([Box<Data>].self, #"[{"a":"abc"}]"#, custom)
        try expectError([Box<Data>].self, #"[{"a":1}]"#, "typeMismatch String @[Index 0#0/a]", custom)
    }

    @Test func nonConformingFloats() throws {
        let convert: (JSONDecoder) -> Void = {
            $0.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: "+∞", negativeInfinity: "-inf", nan: "nan")
        }
        try expectSame([Bits].self, #"["+∞","-inf",1.5]"#, convert)
        try expectSame([FloatBits].self, #"["+∞","-inf",1.5]"#, convert)
        try expectError([Double].self, #"["+\u221e"]"#, "typeMismatch Double @[Index 0#0]", convert)
        try expectError([Double].self, #"["inf"]"#, "typeMismatch Double @[Index 0#0]", convert)
        try expectError([Double].self, #"["-inf"]"#, "typeMismatch Double @[Index 0#0]")
        let nan = try #require(
            CurlewJSONDecoder(
                nonConformingFloatDecodingStrategy: .convertFromString(
                    positiveInfinity: "a", negativeInfinity: "b", nan: "nan")))
        #expect(try nan.decode([Double].self, from: Data(#"["nan"]"#.utf8))[0].isNaN)
    }

    @Test func snakeCaseKeys() throws {
        struct Snake: Decodable, Equatable {
            let userId: Int
            let displayName: String
            let _private: Int?
            let trailing_: Int?
            let allCaps: Int?
            let with2NdDigit: Int?
            let a1bC2D: Int?
            let plain: Int
            let lookup: [String: Int]
        }
        let snake: (JSONDecoder) -> Void = { $0.keyDecodingStrategy = .convertFromSnakeCase }
        try expectSame(
            Snake.self,
            #"""
            {"user_id":1,"display_name":"x","_private":2,"trailing_":3,"ALL_CAPS":4,"with_2nd_digit":5,"a1b_c2d":6,
             "plain":7,"lookup":{"keep_me":1,"and_me":2}}
            """#, snake)
        try expectError(Snake.self, #"{"UserId":1}"#, "keyNotFound userId @[]", snake)
        try expectError(Snake.self, #"{"userId":1}"#, "keyNotFound displayName @[]", snake)
        try expectError(
            Snake.self, #"{"user_id":1,"display_name":"x","plain":7,"lookup":{"a_b":"x"}}"#,
            "typeMismatch Int @[lookup/a_b]", snake)
        try expectError(
            Snake.self, #"{"user_id":1,"display_name":"x","plain":7,"lookup":null}"#,
            "valueNotFound Dictionary<String, Any> @[lookup]", snake)
        let keys = [
            "a_b", "aB", "_a_b_", "__a__b__", "a__b", "ALL_CAPS_KEY", "mixed_CASE_key", "with_2nd_digit", "a1b_c2d",
            "x-y_z",
            "é_b", "a_b\u{301}", "_", "__", "a", "", "1_2", "ID_", "_ID", "a_b_c_d_e_f_g_h_i", "ab_ABC_aBc", "x_y.z",
            "snake_ünï",
        ]
        for key in keys {
            try expectSame(KeyProbe.self, #"{"\#(key)":1}"#, snake)
        }
        // Keys converting to the same name: the first wins.
        try expectSame(KeyProbe.self, #"{"a_b":1,"aB":2,"a__b":3}"#, snake)
        try expectSame(Box<Int>.self, #"{"_a":1,"a":2}"#, snake)
        // Random ASCII keys: the byte-level conversion against Foundation's.
        let alphabet = Array("aZb9_Y0_zQ1_x")
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<300 {
            let members = (0..<Int.random(in: 1...6, using: &generator)).map { index in
                let key = String(
                    (0..<Int.random(in: 1...10, using: &generator)).map { _ in
                        alphabet.randomElement(using: &generator) ?? "a"
                    })
                return #""\#(key)":\#(index)"#
            }
            try expectSame(KeyProbe.self, "{\(members.joined(separator: ","))}", snake)
        }
    }

    @Test func customKeyStrategyAndUserInfo() throws {
        let recorder = PathRecorder()
        let custom: (JSONDecoder) -> Void = {
            $0.keyDecodingStrategy = .custom { path in
                recorder.record(pathShape(path))
                return Manual.AnyKey(stringValue: path.last.map { $0.stringValue.uppercased() } ?? "")
            }
        }
        struct Upper: Decodable, Equatable {
            let A: Int
            let B: [Box2]
            struct Box2: Decodable, Equatable { let X: String }
        }
        let json = Data(#"{"a":1,"b":[{"x":"1"},{"x":"2"}],"ignored":null}"#.utf8)
        try expectSame(Upper.self, json, custom)
        // The closure is called for the same keys, with the same paths, in the same order.
        let foundation = JSONDecoder()
        custom(foundation)
        _ = recorder.take()
        _ = try foundation.decode(Upper.self, from: json)
        let foundationPaths = recorder.take()
        _ = try #require(CurlewJSONDecoder(settingsOf: foundation)).decode(Upper.self, from: json)
        #expect(recorder.take() == foundationPaths)
        #expect(foundationPaths.count == 5)

        let flagKey = try #require(CodingUserInfoKey(rawValue: "flag"))
        struct Info: Decodable, Equatable {
            let flag: String
            init(from decoder: any Decoder) throws {
                let values = decoder.userInfo.filter { $0.key.rawValue == "flag" }.values
                flag = values.first as? String ?? "none"
            }
        }
        let outcome = try expectSame([Info].self, "[1,{}]") { $0.userInfo = [flagKey: "set"] }
        guard case .value(let infos) = outcome else {
            Issue.record("no value")
            return
        }
        #expect(infos.map(\.flag) == ["set", "set"])
    }

    @Test func urls() throws {
        try expectSame(Box<URL>.self, #"{"a":"https://example.com/a?b=c#d"}"#)
        try expectSame(Box<URL>.self, #"{"a":"http://x.com/a b"}"#)
        try expectError(Box<URL>.self, #"{"a":""}"#, "dataCorrupted @[a]")
        try expectError(Box<URL>.self, #"{"a":1}"#, "typeMismatch String @[a]")
        try expectError(Box<URL>.self, #"{"a":null}"#, "valueNotFound URL @[a]")
    }

    @Test func errorsCarryJSONDecodersCaseAndPath() throws {
        struct Outer: Decodable, Equatable {
            struct Inner: Decodable, Equatable {
                let zip: String
                let flags: [Bool]
            }
            let users: [Inner]
        }
        try expectError(
            Outer.self, #"{"users":[{"zip":"1","flags":[]},{"flags":[]}]}"#, "keyNotFound zip @[users/Index 1#1]")
        try expectError(
            Outer.self, #"{"users":[{"zip":"1","flags":[true,null]}]}"#,
            "typeMismatch Bool @[users/Index 0#0/flags/Index 1#1]")
        try expectError(
            Outer.self, #"{"users":[{"zip":"1","flags":[true,1]}]}"#,
            "typeMismatch Bool @[users/Index 0#0/flags/Index 1#1]")
        try expectError(Outer.self, #"{"users":[null]}"#, "valueNotFound Dictionary<String, Any> @[users/Index 0#0]")
        try expectError(Outer.self, #"{"users":{}}"#, "typeMismatch Array<Any> @[users]")
        try expectError(Outer.self, #"{"users":null}"#, "valueNotFound Array<Any> @[users]")
        try expectError(Outer.self, "[]", "typeMismatch Dictionary<String, Any> @[]")
        try expectError(Outer.self, "null", "valueNotFound Dictionary<String, Any> @[]")
        try expectError(Box<Bool>.self, #"{"a":null}"#, "typeMismatch Bool @[a]")
        try expectError(Box<[Int]>.self, #"{"a":[1,2.5]}"#, "dataCorrupted @[]")
        try expectError(Box<String>.self, "{}", "keyNotFound a @[]")
        struct Thrower: Decodable, Equatable {
            struct Custom: Error {}
            init(from decoder: any Decoder) throws { throw Custom() }
        }
        try expectError([Thrower].self, "[1]", "other Custom: Custom()")
        // A Decodable that catches the number error itself: JSONDecoder's is not a DecodingError there.
        struct Catcher: Decodable, Equatable {
            let caught: String
            init(from decoder: any Decoder) throws {
                do {
                    _ = try decoder.singleValueContainer().decode(Int8.self)
                    caught = "none"
                } catch is DecodingError {
                    caught = "DecodingError"
                } catch {
                    caught = "other"
                }
            }
        }
        try expectSame(Catcher.self, "300")
    }

    @Test func fuzzedDocumentsMatch() throws {
        let seeds = [
            #"[{"id":1,"login":"user001","name":"User Number 1","email":"user1@example.com","admin":false,"score":1.25,"#
                + #""tags":["a","b"]},{"id":2,"login":"user002","admin":true,"score":2.5,"tags":[]}]"#,
            #"{"a":[1,-2.5e3,true,false,null,"x\u00e9\n",{"b":{"c":[[]]}}],"d":"\ud83d\ude00","e":0}"#,
        ]
        let mutations: [UInt8] = Array(#"{}[],:"\ 0123456789.-+eEtrufalsn/u"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
        var generator = SplitMix64(seed: 0x5EED)
        for seed in seeds {
            let bytes = Array(seed.utf8)
            try expectSame(Tree.self, Data(bytes))
            try expectSame([User].self, Data(bytes))
            for _ in 0..<1_500 {
                var mutated = bytes
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    let position = Int.random(in: 0..<mutated.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: mutated[position] = mutations.randomElement(using: &generator) ?? 0
                    case 1: mutated.remove(at: position)
                    default: mutated.insert(mutations.randomElement(using: &generator) ?? 0, at: position)
                    }
                    if mutated.isEmpty { mutated = [0x30] }
                }
                try expectSame(Tree.self, Data(mutated))
                try expectSame([User].self, Data(mutated))
            }
        }
    }

    @Test func settingsDecideBetweenCurlewAndJSONDecoder() {
        #expect(CurlewJSONDecoder() != nil)
        #expect(CurlewJSONDecoder(allowsJSON5: true) == nil)
        #expect(CurlewJSONDecoder(assumesTopLevelDictionary: true) == nil)
        let json5 = JSONDecoder()
        json5.allowsJSON5 = true
        #expect(CurlewJSONDecoder(settingsOf: json5) == nil)
        let topLevel = JSONDecoder()
        topLevel.assumesTopLevelDictionary = true
        #expect(CurlewJSONDecoder(settingsOf: topLevel) == nil)
        let configured = JSONDecoder()
        configured.dateDecodingStrategy = .iso8601
        configured.dataDecodingStrategy = .deferredToData
        configured.keyDecodingStrategy = .convertFromSnakeCase
        configured.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "i", negativeInfinity: "-i", nan: "n")
        if let key = CodingUserInfoKey(rawValue: "k") { configured.userInfo = [key: 1] }
        #expect(CurlewJSONDecoder(settingsOf: configured) != nil)
    }

    @Test func concurrentDecodesShareNothing() async throws {
        let decoder = try #require(CurlewJSONDecoder())
        let expected = try JSONDecoder().decode([User].self, from: usersBody)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    for _ in 0..<20 {
                        guard try decoder.decode([User].self, from: usersBody) == expected else { return false }
                    }
                    return true
                }
            }
            for try await matched in group { #expect(matched) }
        }
    }

    @Test func containersAndDecodersOutliveTheDecodeCall() throws {
        /// Keeps its containers and reads them after `decode` returned.
        struct Escaping: Decodable {
            let object: KeyedDecodingContainer<Manual.AnyKey>
            let list: any UnkeyedDecodingContainer
            let superDecoder: any Decoder
            init(from decoder: any Decoder) throws {
                object = try decoder.container(keyedBy: Manual.AnyKey.self)
                list = try object.nestedUnkeyedContainer(forKey: Manual.AnyKey(stringValue: "list"))
                superDecoder = try object.superDecoder(forKey: Manual.AnyKey(stringValue: "inner"))
            }
            func read() -> [String] {
                var list = list
                let inner = try? superDecoder.container(keyedBy: Manual.AnyKey.self)
                return [
                    (try? object.decode(String.self, forKey: Manual.AnyKey(stringValue: "name"))) ?? "-",
                    (try? list.decode(Int.self)).map { "\($0)" } ?? "-",
                    (try? list.decode(Int.self)).map { "\($0)" } ?? "-",
                    (try? inner?.decode(Bool.self, forKey: Manual.AnyKey(stringValue: "flag"))).map { "\($0)" } ?? "-",
                    pathShape(superDecoder.codingPath),
                    errorShape(DecodingError.dataCorrupted(.init(codingPath: list.codingPath, debugDescription: ""))),
                ]
            }
        }
        let json = Data(#"{"name":"n","list":[1,"x"],"inner":{"flag":true}}"#.utf8)
        let foundation = try JSONDecoder().decode(Escaping.self, from: json)
        let curlew = try #require(CurlewJSONDecoder()).decode(Escaping.self, from: json)
        #expect(curlew.read() == foundation.read())
        #expect(curlew.read() == ["n", "1", "-", "true", "inner", "dataCorrupted @[list]"])
    }

    @Test func deepValidDocumentsDecodeRecursively() throws {
        let depth = 300
        let arrays = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
        try expectSame(Tree.self, arrays)
        let objects = String(repeating: #"{"a":"#, count: depth) + "[true]" + String(repeating: "}", count: depth)
        try expectSame(Tree.self, objects)
    }
}

/// A seeded generator, so that the randomized differential tests are reproducible.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// Collects the coding paths a custom key strategy is called with (from any thread).
private final class PathRecorder: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var paths: [String] = []

    func record(_ path: String) {
        lock.lock()
        defer { lock.unlock() }
        paths.append(path)
    }

    func take() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        defer { paths = [] }
        return paths
    }
}
