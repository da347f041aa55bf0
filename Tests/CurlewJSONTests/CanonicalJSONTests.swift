// Curlew — canonical JSON: sorted members, no insignificant whitespace, tokens as written.

import CurlewJSON
import Foundation
import Testing

/// The canonical form of `json`, as text; nil when it is not strict JSON.
private func canonical(_ json: String) -> String? {
    CanonicalJSON.canonical(Data(json.utf8)).map { String(decoding: $0, as: UTF8.self) }
}

@Suite struct CanonicalJSONTests {
    @Test func membersAreSortedAtEveryDepth() {
        #expect(
            canonical(#"{"b":{"d":1,"c":2},"a":[3,{"z":0,"y":[]}]}"#) == #"{"a":[3,{"y":[],"z":0}],"b":{"c":2,"d":1}}"#)
        #expect(canonical(#"{"b":1,"a":{}}"#) == #"{"a":{},"b":1}"#)
    }

    @Test func arraysKeepTheirOrder() {
        #expect(canonical("[3,1,2]") == "[3,1,2]")
        #expect(canonical(#"[{"b":1,"a":2},[2,1],"x"]"#) == #"[{"a":2,"b":1},[2,1],"x"]"#)
    }

    @Test func insignificantWhitespaceIsRemoved() {
        let spaced = " { \"a\" : [ 1 , 2 ] ,\n\t\"b\" : null , \"c\":{ } ,\"d\":[ ] } \r\n"
        #expect(canonical(spaced) == #"{"a":[1,2],"b":null,"c":{},"d":[]}"#)
        #expect(canonical(" 42 ") == "42")
        #expect(canonical("\u{FEFF}[true, false]") == "[true,false]")
        #expect(canonical(#""a b""#) == #""a b""#)
    }

    @Test func stringsAndNumbersAreWrittenAsTheyAre() {
        #expect(
            canonical(#"{"n": 1.50e+3, "m": -0, "s": "caf\u00e9 \/ \n", "t": "é"}"#)
                == #"{"m":-0,"n":1.50e+3,"s":"caf\u00e9 \/ \n","t":"é"}"#)
    }

    @Test func keysSortByTheirUnescapedValue() {
        // "\u0062" is "b": between "a" and "c", although its backslash sorts before both.
        #expect(canonical(#"{"c":1,"\u0062":2,"a":3}"#) == #"{"a":3,"\u0062":2,"c":1}"#)
        // UTF-8 order: "E" (0x45), "z" (0x7A), "é" (0xC3 0xA9).
        #expect(canonical(#"{"é":1,"z":2,"E":3}"#) == #"{"E":3,"z":2,"é":1}"#)
        #expect(canonical(#"{"ab":1,"a":2,"":3}"#) == #"{"":3,"a":2,"ab":1}"#)
    }

    @Test func duplicateKeysKeepTheirOrder() {
        #expect(canonical(#"{"a":2,"b":0,"a":1}"#) == #"{"a":2,"a":1,"b":0}"#)
        #expect(canonical(#"{"\u0061":2,"a":1}"#) == #"{"\u0061":2,"a":1}"#)
        #expect(canonical(#"{"a":1,"\u0061":2}"#) == #"{"a":1,"\u0061":2}"#)
    }

    @Test func bodiesThatDifferOnlyInKeyOrderAreEqual() {
        let first = Data(#"{"user":{"name":"Ada","id":1},"tags":["x","y"],"page":2}"#.utf8)
        let second = Data(#"{"page":2,"tags":["x","y"],"user":{"id":1,"name":"Ada"}}"#.utf8)
        #expect(CanonicalJSON.canonical(first) != nil)
        #expect(CanonicalJSON.canonical(first) == CanonicalJSON.canonical(second))
        let reordered = Data(#"{"page":2,"tags":["y","x"],"user":{"id":1,"name":"Ada"}}"#.utf8)
        #expect(CanonicalJSON.canonical(first) != CanonicalJSON.canonical(reordered))
    }

    @Test func documentsThatAreNotStrictJSONHaveNoCanonicalForm() {
        for json in ["", " ", "{", "[1,]", #"{"a":1,}"#, "{'a':1}", "[01]", "<html>", "[1] x", "{a:1}", "[NaN]"] {
            #expect(canonical(json) == nil, "\(json)")
        }
        #expect(CanonicalJSON.canonical(Data([0x22, 0xFF, 0x22])) == nil)
    }
}
