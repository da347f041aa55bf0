// Curlew — filters and mapping of responses, including the Responses document's examples.

import Curlew
import Foundation
import Testing

@Suite struct ResponseMappingTests {
    func response(_ status: Int = 200, _ body: String) -> ApiResponse {
        ApiResponse(statusCode: status, data: Data(body.utf8))
    }

    @Test func filters() throws {
        let ok = response(204, "")
        #expect(try ok.filter(statusCode: 204) == ok)
        #expect(try ok.filter(statusCodes: 200...299) == ok)
        #expect(try ok.filter(statusCodes: 200..<205) == ok)
        #expect(try ok.filter(statusCodes: 204...) == ok)
        #expect(try ok.filter(statusCodes: ...204) == ok)
        #expect(try ok.filterSuccessfulStatusCodes() == ok)
        let redirect = response(302, "")
        #expect(try redirect.filterSuccessfulStatusAndRedirectCodes() == redirect)
        #expect {
            try redirect.filterSuccessfulStatusCodes()
        } throws: { error in
            guard case .statusCode(let kept) = error as? CurlewError else { return false }
            return kept == redirect
        }
        #expect(throws: CurlewError.self) { try response(404, "").filter(statusCodes: 200..<300) }
        #expect(throws: CurlewError.self) { try response(500, "").filterSuccessfulStatusAndRedirectCodes() }
    }

    @Test func mapJSON() throws {
        #expect(try response(200, #"{"a":[1,true,null,"x",2.5]}"#).mapJSON() == ["a": [1, true, nil, "x", 2.5]])
        #expect(try response(200, "").mapJSON(failsOnEmptyData: false) == .null)
        #expect(throws: CurlewError.self) { try response(200, "").mapJSON() }
        #expect(throws: CurlewError.self) { try response(200, "<html>").mapJSON() }
    }

    @Test func mapString() throws {
        #expect(try response(200, "plain text ✓").mapString() == "plain text ✓")
        #expect(try response(200, #"{"user":{"name":"Ada"}}"#).mapString(atKeyPath: "user.name") == "Ada")
        #expect {
            try response(200, #"{"user":{"id":1}}"#).mapString(atKeyPath: "user.id")
        } throws: { error in
            if case .stringMapping = error as? CurlewError { return true }
            return false
        }
        let invalidUTF8 = ApiResponse(statusCode: 200, data: Data([0xFF, 0xFE]))
        #expect(throws: CurlewError.self) { try invalidUTF8.mapString() }
    }

    struct User: Decodable, Equatable {
        let id: String
        let firstName: String
        let lastName: String
        let updated: Date
    }

    @Test func usersAtKeyPathWithSecondsSince1970() throws {
        let body = """
            {"users": [
              {"id": "jp", "firstName": "James", "lastName": "Potter", "updated": 1507709925},
              {"id": "lp", "firstName": "Lily", "lastName": "Potter", "updated": 1507709926}
            ]}
            """
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let users = try response(200, body).filterSuccessfulStatusCodes().map([User].self, atKeyPath: "users", using: decoder)
        #expect(
            users == [
                User(id: "jp", firstName: "James", lastName: "Potter", updated: Date(timeIntervalSince1970: 1_507_709_925)),
                User(id: "lp", firstName: "Lily", lastName: "Potter", updated: Date(timeIntervalSince1970: 1_507_709_926)),
            ])
    }

    struct OptionalUser: Decodable, Equatable {
        let id: String?
        let firstName: String?
        let lastName: String?
        let updated: Date?
    }

    @Test func emptyBodyWithFailsOnEmptyDataFalse() throws {
        let empty = response(200, "")
        let user = try empty.map(OptionalUser.self, failsOnEmptyData: false)
        #expect(user == OptionalUser(id: nil, firstName: nil, lastName: nil, updated: nil))
        let users = try empty.map([OptionalUser].self, atKeyPath: "users", failsOnEmptyData: false)
        #expect(users == [OptionalUser(id: nil, firstName: nil, lastName: nil, updated: nil)])
        #expect(throws: CurlewError.self) { try empty.map(OptionalUser.self) }
        #expect(try response(200, #"{"users": []}"#).map([OptionalUser].self, atKeyPath: "users", failsOnEmptyData: false) == [])
    }

    @Test func scalarsAndNestedPaths() throws {
        let body = response(200, #"{"a":{"b":[{"c":42,"ok":true,"name":"x","ratio":0.25}]}}"#)
        #expect(try body.map(Int.self, atKeyPath: "a.b.0.c") == 42)
        #expect(try body.map(Bool.self, atKeyPath: "a.b.0.ok") == true)
        #expect(try body.map(String.self, atKeyPath: "a.b.0.name") == "x")
        #expect(try body.map(Double.self, atKeyPath: "a.b.0.ratio") == 0.25)
        #expect {
            try body.map(Int.self, atKeyPath: "a.b.0.name")
        } throws: { error in
            if case .objectMapping = error as? CurlewError { return true }
            return false
        }
        #expect {
            try body.map(Int.self, atKeyPath: "a.missing")
        } throws: { error in
            if case .jsonMapping = error as? CurlewError { return true }
            return false
        }
    }

    @Test func keyPathsFindWhatJSONValueFinds() throws {
        let body = response(
            200,
            #"{"caf\u00e9":{"x":[1,{"y":null}]},"K":2,"dup":1,"dup":2,"":{"":3},"list":[10,20,30],"s":"t","n":1.50}"#)
        let root = try body.mapJSON()
        let keyPaths = [
            "café.x", "café.x.1", "café.x.1.y", "cafe\u{301}.x.0", "\u{212A}", "dup", ".", "list", "list.+1",
            "list.-0", "list.02", "list.3", "list.-1", "list.x", "s", "s.0", "n", "missing", "café.", "café..x", "",
        ]
        for keyPath in keyPaths {
            let expected = root.value(atKeyPath: keyPath)
            do {
                #expect(try body.map(JSONValue.self, atKeyPath: keyPath) == expected, "\(keyPath)")
            } catch {
                guard case .jsonMapping = error else {
                    Issue.record("\(keyPath): \(error)")
                    continue
                }
                #expect(expected == nil, "\(keyPath)")
            }
        }
    }

    @Test func keyPathValuesDecodeWithTheCallersSettingsAndPathsFromTheValue() throws {
        struct Row: Decodable, Equatable {
            let userId: Int
        }
        let body = response(200, #"{"data": {"rows": [{"user_id": 1}, {"user_id": "x"}], "first": {"user_id": 1}}}"#)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try body.map(Row.self, atKeyPath: "data.first", using: decoder) == Row(userId: 1))
        #expect(try body.map(Row.self, atKeyPath: "data.rows.0", using: decoder) == Row(userId: 1))
        #expect {
            try body.map([Row].self, atKeyPath: "data.rows", using: decoder)
        } throws: { error in
            guard case .objectMapping(DecodingError.typeMismatch(let type, let context), _) = error as? CurlewError
            else { return false }
            return type == Int.self && context.codingPath.map(\.stringValue) == ["Index 1", "userId"]
        }
        // A JSONDecoder subclass is given the value's own bytes, as written in the body.
        final class Recording: JSONDecoder, @unchecked Sendable {
            // Only touched on the test's thread.
            var documents: [String] = []
            override func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
                documents.append(String(decoding: data, as: UTF8.self))
                return try super.decode(type, from: data)
            }
        }
        let recording = Recording()
        recording.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try body.map(Row.self, atKeyPath: "data.first", using: recording) == Row(userId: 1))
        #expect(try body.map(Int.self, atKeyPath: "data.rows.0.user_id", using: recording) == 1)
        #expect(recording.documents == [#"{"user_id": 1}"#, "1"])
        // Trailing commas, which JSONDecoder tolerates, do not hide the key path.
        let lenient = response(200, #"{"data": {"rows": [1, 2,],},}"#)
        #expect(try lenient.map([Int].self, atKeyPath: "data.rows") == [1, 2])
    }

    @Test func missingKeyPathsWithFailsOnEmptyDataFalseDecodeAsEmpty() throws {
        let empty = OptionalUser(id: nil, firstName: nil, lastName: nil, updated: nil)
        let unrelated = response(200, #"{"a": 1}"#)
        #expect(try unrelated.map(OptionalUser.self, atKeyPath: "users", failsOnEmptyData: false) == empty)
        #expect(try response(200, "").map([OptionalUser].self, atKeyPath: "a.b", failsOnEmptyData: false) == [empty])
        #expect {
            try response(200, "<html>").map(OptionalUser.self, atKeyPath: "users", failsOnEmptyData: false)
        } throws: { error in
            if case .jsonMapping = error as? CurlewError { return true }
            return false
        }
        #expect {
            try response(200, #"{"a": 1}"#).map(Int.self, atKeyPath: "users", failsOnEmptyData: false)
        } throws: { error in
            if case .objectMapping = error as? CurlewError { return true }
            return false
        }
    }

    @Test func objectMappingKeepsTheResponse() {
        let bad = response(200, #"{"id": 5}"#)
        #expect {
            try bad.map(User.self)
        } throws: { error in
            guard case .objectMapping(_, let kept) = error as? CurlewError else { return false }
            return kept == bad && (error as? CurlewError)?.response == bad
        }
    }
}
