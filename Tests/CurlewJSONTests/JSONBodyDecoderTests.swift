// Curlew — the one decision between the tape decoder and JSONDecoder, and the settings it is made from.

import CurlewJSON
import Foundation
import Testing

/// The strategy a body decoder chose, by name.
private func strategyName(_ decoder: JSONBodyDecoder) -> String {
    switch decoder.strategy {
    case .tape: "tape"
    case .jsonDecoderPerDecode: "jsonDecoderPerDecode"
    case .instance: "instance"
    }
}

private struct Account: Decodable, Equatable {
    let userId: Int
    let createdAt: Date
    let tags: [String]
}

/// A subclass that counts its decodes (only used on the test's thread).
private final class CountingDecoder: JSONDecoder, @unchecked Sendable {
    var calls = 0
    override func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        calls += 1
        return try super.decode(type, from: data)
    }
}

@Suite struct JSONBodyDecoderTests {
    let snakeBody = Data(#"{"user_id":7,"created_at":"2024-02-29T12:34:56Z","tags":["a","b"]}"#.utf8)

    func snakeCaseISO8601() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    @Test func plainAndReproducibleSettingsUseTheTape() throws {
        #expect(strategyName(JSONBodyDecoder(JSONDecoder())) == "tape")
        #expect(strategyName(JSONBodyDecoder.standard) == "tape")
        let configured = snakeCaseISO8601()
        let body = JSONBodyDecoder(configured)
        #expect(strategyName(body) == "tape")
        let expected = Account(userId: 7, createdAt: Date(timeIntervalSince1970: 1_709_210_096), tags: ["a", "b"])
        #expect(try body.decode(Account.self, from: snakeBody) == expected)
        #expect(try configured.decode(Account.self, from: snakeBody) == expected)
    }

    @Test func settingsTheTapeCannotReproduceGetAJSONDecoderPerDecode() throws {
        let json5 = JSONDecoder()
        json5.allowsJSON5 = true
        let json5Body = JSONBodyDecoder(json5)
        #expect(strategyName(json5Body) == "jsonDecoderPerDecode")
        let lenient = Data("{a: [1, 2,], /* comment */}".utf8)
        #expect(try json5Body.decode([String: [Int]].self, from: lenient) == ["a": [1, 2]])
        #expect(try json5.decode([String: [Int]].self, from: lenient) == ["a": [1, 2]])

        let topLevel = JSONDecoder()
        topLevel.assumesTopLevelDictionary = true
        let topLevelBody = JSONBodyDecoder(topLevel)
        #expect(strategyName(topLevelBody) == "jsonDecoderPerDecode")
        let unbraced = Data(#""a": 2, "b": 3"#.utf8)
        #expect(try topLevelBody.decode([String: Int].self, from: unbraced) == ["a": 2, "b": 3])
        #expect(try topLevel.decode([String: Int].self, from: unbraced) == ["a": 2, "b": 3])
    }

    @Test func subclassesAreUsedAsThemselves() throws {
        let counting = CountingDecoder()
        let body = JSONBodyDecoder(counting)
        #expect(strategyName(body) == "instance")
        guard case .instance(let instance) = body.strategy else {
            Issue.record("not an instance")
            return
        }
        #expect(instance === counting)
        #expect(try body.decode([Int].self, from: Data("[1,2]".utf8)) == [1, 2])
        #expect(counting.calls == 1)
    }

    @Test func settingsAreTakenWhenTheBodyDecoderIsMade() throws {
        let decoder = JSONDecoder()
        let body = JSONBodyDecoder(decoder)
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(throws: DecodingError.self) { try body.decode(Account.self, from: snakeBody) }
        let json5 = JSONDecoder()
        json5.allowsJSON5 = true
        let perDecode = JSONBodyDecoder(json5)
        json5.allowsJSON5 = false
        #expect(try perDecode.decode([Int].self, from: Data("[1,]".utf8)) == [1])
        #expect(try perDecode.decode([Int].self, from: Data("[0x10]".utf8)) == [16])
    }

    @Test func settingsRebuildTheSameJSONDecoder() throws {
        let flag = try #require(CodingUserInfoKey(rawValue: "flag"))
        let original = snakeCaseISO8601()
        original.dataDecodingStrategy = .deferredToData
        original.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        original.userInfo = [flag: "on"]
        original.allowsJSON5 = true
        original.assumesTopLevelDictionary = true
        let rebuilt = JSONDecoderSettings(of: original).makeJSONDecoder()
        #expect(type(of: rebuilt) == JSONDecoder.self)
        #expect(rebuilt !== original)
        #expect(rebuilt.allowsJSON5)
        #expect(rebuilt.assumesTopLevelDictionary)
        #expect(rebuilt.userInfo[flag] as? String == "on")
        let body = Data(#""user_id": 7, "created_at": "2024-02-29T12:34:56Z", "tags": ["a",],"#.utf8)
        #expect(try rebuilt.decode(Account.self, from: body) == (try original.decode(Account.self, from: body)))
        let floats = Data(#""values": ["+inf", "-inf", 1.5]"#.utf8)
        #expect(try rebuilt.decode([String: [Double]].self, from: floats) == ["values": [.infinity, -.infinity, 1.5]])
        let bytes = Data(#""data": [104, 105]"#.utf8)
        #expect(try rebuilt.decode([String: Data].self, from: bytes) == ["data": Data("hi".utf8)])

        let plain = JSONDecoderSettings().makeJSONDecoder()
        #expect(!plain.allowsJSON5)
        #expect(!plain.assumesTopLevelDictionary)
        #expect(plain.userInfo.isEmpty)
    }
}
