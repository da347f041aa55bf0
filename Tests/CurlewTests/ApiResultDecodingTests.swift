// Curlew — Curlew's own Decodable types and ApiResult decode through the tape decoder as through JSONDecoder.

import Curlew
import CurlewJSON
import Foundation
import Testing

/// What a decode produced: a value, or an error's case, type and coding path.
private enum Outcome<T: Equatable>: Equatable {
    case value(T)
    case error(String)

    init(_ body: () throws -> T) {
        do {
            self = .value(try body())
        } catch {
            self = .error(errorShape(error))
        }
    }
}

/// An error's case, type and coding path (messages may differ).
private func errorShape(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "other \(type(of: error)): \(error)" }
    func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map { key in key.intValue.map { "\(key.stringValue)#\($0)" } ?? key.stringValue }
            .joined(separator: "/")
    }
    switch error {
    case .dataCorrupted(let context): return "dataCorrupted @[\(path(context))]"
    case .keyNotFound(let key, let context): return "keyNotFound \(key.stringValue) @[\(path(context))]"
    case .typeMismatch(let type, let context): return "typeMismatch \(type) @[\(path(context))]"
    case .valueNotFound(let type, let context): return "valueNotFound \(type) @[\(path(context))]"
    @unknown default: return "unknown \(error)"
    }
}

/// Expects the same outcome from a plain JSONDecoder and the tape decoder.
private func expectSame<T: Decodable & Equatable>(
    _ type: T.Type, _ data: Data, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let curlew = try #require(CurlewJSONDecoder())
    let foundation = Outcome { try JSONDecoder().decode(T.self, from: data) }
    #expect(
        Outcome { try curlew.decode(T.self, from: data) } == foundation,
        "input: \(String(decoding: data.prefix(200), as: UTF8.self))", sourceLocation: sourceLocation)
}

private func expectSame<T: Decodable & Equatable>(
    _ type: T.Type, _ json: String, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    try expectSame(type, Data(json.utf8), sourceLocation: sourceLocation)
}

private struct Box<T: Decodable & Equatable>: Decodable, Equatable {
    let a: T
}

@Suite struct ApiResultDecodingTests {
    @Test func curlewTypesDecodeIdentically() throws {
        // Refused by the strict parser and handed to JSONDecoder: the outcome is exactly its.
        let inputs: [String] = [
            "[1,2,]", #"{"a":1,}"#, "[01]", #"{"a":1,"b":01}"#, "{\"a\":1,\"b\":\"\u{1}\"}", #"{"a":1,"b":"\ud800"}"#,
            #"{"a":"\ud800"}"#, "[1] x", "", "  ", "[1", "nul", #"{"a":1 // no"#, "[1e400,", "\u{FEFF}[1,2]",
        ]
        for json in inputs {
            try expectSame(JSONValue.self, json)
        }
        try expectSame(EmptyBody.self, #"{"anything":[1,2,3]}"#)
        try expectSame(JSONValue.self, #"{"a":[1,true,null,"x",2.5,{"b":{}}]}"#)
        let seeds = [
            #"[{"id":1,"login":"user001","name":"User Number 1","email":"user1@example.com","admin":false,"score":1.25,"#
                + #""tags":["a","b"]},{"id":2,"login":"user002","admin":true,"score":2.5,"tags":[]}]"#,
            #"{"a":[1,-2.5e3,true,false,null,"x\u00e9\n",{"b":{"c":[[]]}}],"d":"\ud83d\ude00","e":0}"#,
        ]
        for seed in seeds {
            try expectSame(JSONValue.self, seed)
        }
        let objects = String(repeating: #"{"a":"#, count: 300) + "[true]" + String(repeating: "}", count: 300)
        try expectSame(JSONValue.self, objects)
    }

    @Test func apiResultDecodesWithTheSameSettings() throws {
        struct Login: Decodable, Equatable {
            let userId: Int
            let expiresAt: Date
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        let body = #"{"user_id":7,"expires_at":"2024-02-29T12:34:56Z"}"#
        let result = try ApiResult<Login, ApiErrorMessage>.decode(
            from: ApiResponse(statusCode: 200, data: Data(body.utf8)), using: decoder)
        #expect(result.value == (try decoder.decode(Login.self, from: Data(body.utf8))))
        let failure = try ApiResult<Login, ApiErrorMessage>.decode(
            from: ApiResponse(statusCode: 401, data: Data(#"{"error_message":"no"}"#.utf8)))
        #expect(failure.errorMessage == ApiErrorMessage(errorMessage: "no"))
        let lenient = try ApiResult<[Int], ApiErrorMessage>.decode(
            from: ApiResponse(statusCode: 200, data: Data("[1,2,]".utf8)))
        #expect(lenient.value == [1, 2])
        #expect {
            _ = try ApiResult<Login, ApiErrorMessage>.decode(from: ApiResponse(statusCode: 200, data: Data(body.utf8)))
        } throws: { error in
            guard case .objectMapping(let underlying, _) = error as? CurlewError else { return false }
            return errorShape(underlying) == "keyNotFound userId @[]"
        }
    }

    @Test func settingsOnlyJSONDecoderHasAreStillHonoured() throws {
        let json5 = JSONDecoder()
        json5.allowsJSON5 = true
        let lenient = try ApiResult<Box<Int>, ApiErrorMessage>.decode(
            from: ApiResponse(statusCode: 200, data: Data("{a: 1, /* c */}".utf8)), using: json5)
        #expect(lenient.value == Box(a: 1))
        let topLevel = JSONDecoder()
        topLevel.assumesTopLevelDictionary = true
        let unbraced = try ApiResult<Box<Int>, ApiErrorMessage>.decode(
            from: ApiResponse(statusCode: 200, data: Data(#""a": 2"#.utf8)), using: topLevel)
        #expect(unbraced.value == Box(a: 2))
    }

    @Test func jsonDecoderSubclassesAreUsedAsTheyAre() throws {
        final class Counting: JSONDecoder, @unchecked Sendable {
            // Only touched on the test's thread.
            var calls = 0
            override func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
                calls += 1
                return try super.decode(type, from: data)
            }
        }
        let decoder = Counting()
        let result = try ApiResult<[Int], ApiErrorMessage>.decode(
            from: ApiResponse(statusCode: 200, data: Data("[1]".utf8)), using: decoder)
        #expect(result.value == [1])
        #expect(decoder.calls == 1)
    }
}
