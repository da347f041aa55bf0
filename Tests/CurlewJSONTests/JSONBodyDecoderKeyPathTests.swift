// Curlew — decoding the value at a key path: found on the tape, decoded there or from its own bytes.

import CurlewJSON
import Foundation
import Testing

/// A subclass that records the documents it is asked to decode (only used on the test's thread).
private final class RecordingDecoder: JSONDecoder, @unchecked Sendable {
    var documents: [String] = []
    override func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        documents.append(String(decoding: data, as: UTF8.self))
        return try super.decode(type, from: data)
    }
}

/// A body decoder that decodes with a new JSONDecoder each time (JSON5 is beyond the tape).
private let perDecode: JSONBodyDecoder = {
    let decoder = JSONDecoder()
    decoder.allowsJSON5 = true
    return JSONBodyDecoder(decoder)
}()

private struct User: Decodable, Equatable {
    let id: Int
    let name: String
}

private let users = #"{"data": {"users": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Brian"}], "total": 2}}"#

@Suite struct JSONBodyDecoderKeyPathTests {
    /// Decodes `type` at `keyPath` of `json` on the tape, with a JSONDecoder per decode and with a
    /// subclass; expects all three to match a plain JSONDecoder given `valueBytes`, and the subclass to
    /// have been given exactly those bytes. Returns the outcome.
    @discardableResult
    func expectSame<T: Decodable & Equatable>(
        _ type: T.Type, _ json: String, at keyPath: String, valueBytes: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Outcome<T> {
        let data = Data(json.utf8)
        let expected = Outcome { try JSONDecoder().decode(T.self, from: Data(valueBytes.utf8)) }
        #expect(strategyIsTape(.standard), sourceLocation: sourceLocation)
        let tape = Outcome { try JSONBodyDecoder.standard.decode(T.self, from: data, atKeyPath: keyPath) }
        let fresh = Outcome { try perDecode.decode(T.self, from: data, atKeyPath: keyPath) }
        let recording = RecordingDecoder()
        let instance = Outcome { try JSONBodyDecoder(recording).decode(T.self, from: data, atKeyPath: keyPath) }
        #expect(tape == expected, "tape, \(keyPath)", sourceLocation: sourceLocation)
        #expect(fresh == expected, "per decode, \(keyPath)", sourceLocation: sourceLocation)
        #expect(instance == expected, "instance, \(keyPath)", sourceLocation: sourceLocation)
        #expect(recording.documents == [valueBytes], sourceLocation: sourceLocation)
        return tape
    }

    func strategyIsTape(_ decoder: JSONBodyDecoder) -> Bool {
        if case .tape = decoder.strategy { return true }
        return false
    }

    /// The error decoding `type` at `keyPath` of `json` throws, on the tape.
    func keyPathError<T: Decodable>(_ type: T.Type, _ json: String, at keyPath: String) -> JSONKeyPathError? {
        do {
            _ = try JSONBodyDecoder.standard.decode(type, from: Data(json.utf8), atKeyPath: keyPath)
            return nil
        } catch {
            return error as? JSONKeyPathError
        }
    }

    @Test func objectsAndArrayElements() {
        let all = expectSame(
            [User].self, users, at: "data.users",
            valueBytes: #"[{"id": 1, "name": "Ada"}, {"id": 2, "name": "Brian"}]"#)
        #expect(all == .value([User(id: 1, name: "Ada"), User(id: 2, name: "Brian")]))
        let second = expectSame(User.self, users, at: "data.users.1", valueBytes: #"{"id": 2, "name": "Brian"}"#)
        #expect(second == .value(User(id: 2, name: "Brian")))
        let data = expectSame([String: Int].self, users, at: "data.total", valueBytes: "2")
        #expect(data == .error("typeMismatch Dictionary<String, Any> @[]"))
    }

    @Test func scalarsDecodeToo() {
        #expect(expectSame(String.self, users, at: "data.users.0.name", valueBytes: #""Ada""#) == .value("Ada"))
        #expect(expectSame(Int.self, users, at: "data.total", valueBytes: "2") == .value(2))
        let scalars = #"{"flag": true, "off": false, "none": null, "ratio": 0.250, "text": "caf\u00e9 \"x\""}"#
        #expect(expectSame(Bool.self, scalars, at: "flag", valueBytes: "true") == .value(true))
        #expect(expectSame(Bool.self, scalars, at: "off", valueBytes: "false") == .value(false))
        #expect(expectSame(Int?.self, scalars, at: "none", valueBytes: "null") == .value(nil))
        #expect(expectSame(Double.self, scalars, at: "ratio", valueBytes: "0.250") == .value(0.25))
        #expect(
            expectSame(String.self, scalars, at: "text", valueBytes: #""caf\u00e9 \"x\"""#) == .value(#"café "x""#))
    }

    @Test func wrongTypesFailWithPathsFromTheValue() {
        #expect(
            expectSame(Int.self, users, at: "data.users.0.name", valueBytes: #""Ada""#)
                == .error("typeMismatch Int @[]"))
        let missingName = #"{"data": {"users": [{"id": 1, "name": "Ada"}, {"id": 2}]}}"#
        let rows = #"[{"id": 1, "name": "Ada"}, {"id": 2}]"#
        #expect(
            expectSame([User].self, missingName, at: "data.users", valueBytes: rows)
                == .error("keyNotFound name @[Index 1#1]"))
        #expect(
            expectSame(User.self, missingName, at: "data.users.0", valueBytes: #"{"id": 1, "name": "Ada"}"#)
                == .value(User(id: 1, name: "Ada")))
        #expect(expectSame(UInt8.self, #"{"n": 300}"#, at: "n", valueBytes: "300") == .error("dataCorrupted @[]"))
    }

    @Test func containersAreHandedOnAsTheirOwnBytes() {
        let nested = #"{"a": [[1, [2]], {"b" : { }} , [ ], "]", "\\"], "c": { }, "d":{"e":[{}]}}"#
        expectSame(Tree.self, nested, at: "a.0", valueBytes: "[1, [2]]")
        expectSame(Tree.self, nested, at: "a.1", valueBytes: #"{"b" : { }}"#)
        expectSame(Tree.self, nested, at: "a.1.b", valueBytes: "{ }")
        expectSame(Tree.self, nested, at: "a.2", valueBytes: "[ ]")
        expectSame(Tree.self, nested, at: "a.3", valueBytes: #""]""#)
        expectSame(Tree.self, nested, at: "a.4", valueBytes: #""\\""#)
        expectSame(Tree.self, nested, at: "c", valueBytes: "{ }")
        expectSame(Tree.self, nested, at: "d", valueBytes: #"{"e":[{}]}"#)
        expectSame(Tree.self, nested, at: "d.e.0", valueBytes: "{}")
        expectSame(
            Tree.self, nested, at: "a",
            valueBytes: #"[[1, [2]], {"b" : { }} , [ ], "]", "\\"]"#)
        // An empty key path is the whole document, without a byte-order mark or surrounding whitespace.
        expectSame(Tree.self, "\u{FEFF} \n" + nested + " \n", at: "", valueBytes: nested)
        expectSame(Int.self, " 42 ", at: "", valueBytes: "42")
    }

    @Test func trailingCommasJSONDecoderToleratesAreFoundToo() {
        let lenient = #"{"a": {"b": [1, 2,], "c": {"d": 3,},}, "e": 4,}"#
        #expect(expectSame([Int].self, lenient, at: "a.b", valueBytes: "[1, 2,]") == .value([1, 2]))
        #expect(
            expectSame([String: Int].self, lenient, at: "a.c", valueBytes: #"{"d": 3,}"#) == .value(["d": 3]))
        #expect(expectSame(Int.self, lenient, at: "a.c.d", valueBytes: "3") == .value(3))
        #expect(expectSame(Int.self, lenient, at: "e", valueBytes: "4") == .value(4))
        #expect(keyPathError(Int.self, lenient, at: "a.x") == .noValue)
        #expect(expectSame(Int.self, "[[],5,]", at: "1", valueBytes: "5") == .value(5))
        #expect(expectSame([Int].self, #"{"a":[],}"#, at: "a", valueBytes: "[]") == .value([]))
        // Only a comma right before a closing bracket is tolerated.
        for body in ["[1,,2]", "[1,,]", "[,]", "[,1]", "{,}", #"{"a":1,,}"#, #"{"a":}"#, #"{"a":]"#, "[1,}", "1,"] {
            #expect(keyPathError(Int.self, body, at: "0") == .notJSON, "\(body)")
        }
    }

    @Test func stepsMatchJSONValueKeyPaths() {
        let json = #"{"caf\u00e9": {"x": 1}, "K": 2, "dup": 1, "dup": 2, "": {"": 3}, "list": [10, 20, 30]}"#
        #expect(expectSame(Int.self, json, at: "café.x", valueBytes: "1") == .value(1))
        #expect(expectSame(Int.self, json, at: "cafe\u{301}.x", valueBytes: "1") == .value(1))
        // The Kelvin sign is canonically equivalent to "K".
        #expect(expectSame(Int.self, json, at: "\u{212A}", valueBytes: "2") == .value(2))
        #expect(expectSame(Int.self, json, at: "dup", valueBytes: "1") == .value(1))
        #expect(expectSame(Int.self, json, at: ".", valueBytes: "3") == .value(3))
        #expect(expectSame(Int.self, json, at: "list.+1", valueBytes: "20") == .value(20))
        #expect(expectSame(Int.self, json, at: "list.-0", valueBytes: "10") == .value(10))
        #expect(expectSame(Int.self, json, at: "list.02", valueBytes: "30") == .value(30))
    }

    @Test func missingValuesAndDocumentsThatAreNotJSON() {
        for keyPath in [
            "data.missing", "data.users.2", "data.users.-1", "data.users.first", "data.users. 1", "data.total.x",
            "data.users.0.id.x", "data.", "DATA",
        ] {
            #expect(keyPathError(Int.self, users, at: keyPath) == .noValue, "\(keyPath)")
        }
        for body in ["", " ", "<html>", "[1] x", "{a: 1}", #"{"a": 1 // no"#] {
            #expect(keyPathError(Int.self, body, at: "a") == .notJSON, "\(body)")
        }
        #expect(keyPathError(Int.self, "[1]", at: "0") == nil)
    }
}
