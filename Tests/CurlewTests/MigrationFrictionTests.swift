// Curlew — what porting Moya's documents found hard, fixed: snake-case error bodies, stubbed transport
// failures, changing only an endpoint's sample response.

import Curlew
import Foundation
import Testing

@Suite struct MigrationFrictionTests {
    private static func snakeCaseDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    @Test(arguments: [false, true])
    func apiErrorMessageDecodesWhateverTheKeyStrategy(convertsSnakeCase: Bool) throws {
        let decoder = convertsSnakeCase ? Self.snakeCaseDecoder() : JSONDecoder()
        let response = ApiResponse(statusCode: 404, data: Data(#"{"error_message":"User doesn't exist."}"#.utf8))
        let result = try ApiResult<String, ApiErrorMessage>.decode(from: response, using: decoder)
        #expect(result.errorMessage == ApiErrorMessage(errorMessage: "User doesn't exist."))
        // Already converted keys decode too, and a body with neither key is an unexpected error.
        let converted = ApiResponse(statusCode: 404, data: Data(#"{"errorMessage":"gone"}"#.utf8))
        #expect(try ApiResult<String, ApiErrorMessage>.decode(from: converted, using: decoder).errorMessage?.errorMessage == "gone")
        let other = ApiResponse(statusCode: 500, data: Data(#"{"message":"boom"}"#.utf8))
        #expect(try ApiResult<String, ApiErrorMessage>.decode(from: other, using: decoder).unexpectedError?.statusCode == 500)
    }

    /// A null message is a decoding failure about `error_message`, not about a key the JSON never had.
    @Test func aNullErrorMessageIsUnexpected() throws {
        let response = ApiResponse(statusCode: 400, data: Data(#"{"error_message":null}"#.utf8))
        let result = try ApiResult<String, ApiErrorMessage>.decode(from: response)
        let failure = try #require(result.unexpectedError?.decodingFailure)
        #expect(failure.contains("error_message"))
        #expect(!failure.contains("\"errorMessage\""))
    }

    @Test func apiErrorMessageEncodesWithTheSnakeCaseKey() throws {
        let encoder = JSONEncoder()
        let data = try encoder.encode(ApiErrorMessage(errorMessage: "nope"))
        #expect(String(decoding: data, as: UTF8.self) == #"{"error_message":"nope"}"#)
    }

    private enum Settings: TargetType {
        case read
        var baseURL: URL { URL(string: "https://settings.example")! }
        var path: String { "/settings" }
        var method: HTTPRequest.Method { .get }
        var task: RequestTask { .requestPlain }
        var headers: [String: String]? { nil }
    }

    private struct Offline: Error {}

    @Test func stubbedNetworkErrorsArriveAsTheRealFailureWould() async {
        func provider(_ error: any Error) -> Provider<Settings> {
            Provider(
                endpointClosure: { target in
                    Endpoint.default(for: target).replacing(sampleResponseClosure: { .networkError(error) })
                },
                stubClosure: Provider.immediatelyStub)
        }
        let timedOut = TransportError(.timedOut, message: "stubbed timeout")
        switch await provider(timedOut).result(for: .read) {
        case .failure(.transport(let error)): #expect(error.code == .timedOut && error.message == "stubbed timeout")
        case let other: Issue.record("expected .transport(.timedOut), got \(other)")
        }
        switch await provider(CurlewError.requestMapping("stubbed")).result(for: .read) {
        case .failure(.requestMapping(let reason)): #expect(reason == "stubbed")
        case let other: Issue.record("expected .requestMapping, got \(other)")
        }
        switch await provider(Offline()).result(for: .read) {
        case .failure(.underlying(let error, nil)): #expect(error is Offline)
        case let other: Issue.record("expected .underlying(Offline), got \(other)")
        }
    }

    @Test func replacingTheSampleResponseKeepsEverythingElse() async throws {
        let options = TransferOptions(connectTimeout: .seconds(3))
        let endpoint = Endpoint(
            url: "https://settings.example/settings", sampleResponseClosure: { .networkResponse(200, Data("a".utf8)) },
            method: .put, task: .requestData(Data("x".utf8)), httpHeaderFields: ["X-A": "1"], transferOptions: options,
            redirectPolicy: .doNotFollow)
        let replaced = endpoint.replacing(sampleResponseClosure: { .networkResponse(404, Data("b".utf8)) })
        #expect(replaced == endpoint)
        #expect(replaced.transferOptions == options && replaced.redirectPolicy != nil && replaced.method == .put)
        guard case .networkResponse(let status, let data) = replaced.sampleResponseClosure() else {
            Issue.record("expected a network response")
            return
        }
        #expect(status == 404 && data == Data("b".utf8))
    }
}
