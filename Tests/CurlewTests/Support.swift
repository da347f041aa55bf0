// Curlew — shared fixtures for the provider-layer tests.

import Curlew
import CurlewTesting
import Foundation
import Testing

/// The GitHub target from the Targets document.
enum GitHub: TargetType {
    case zen
    case userProfile(String)
    case userRepositories(String)
    case branches(String, Bool)

    var baseURL: URL { URL(string: "https://api.github.com")! }

    var path: String {
        switch self {
        case .zen: "/zen"
        case .userProfile(let name): "/users/\(name)"
        case .userRepositories(let name): "/users/\(name)/repos"
        case .branches(let repo, _): "/repos/\(repo)/branches"
        }
    }

    var method: HTTPRequest.Method { .get }

    var task: RequestTask {
        switch self {
        case .userRepositories: .requestParameters(parameters: ["sort": "pushed"], encoding: URLEncoding.default)
        case .branches(_, let protected): .requestParameters(parameters: ["protected": "\(protected)"], encoding: URLEncoding.default)
        default: .requestPlain
        }
    }

    var headers: [String: String]? { nil }

    var sampleData: Data {
        switch self {
        case .zen: Data("Half measures are as bad as nothing at all.".utf8)
        case .userProfile(let name): Data(#"{"login": "\#(name)", "id": 100}"#.utf8)
        case .userRepositories: Data(#"[{"name": "Repo Name"}]"#.utf8)
        case .branches: Data(#"[{"name": "master"}]"#.utf8)
        }
    }
}

/// A target against a local server whose address is given per case.
struct Local: TargetType, AccessTokenAuthorizable {
    var base: String
    var path: String
    var method: HTTPRequest.Method = .get
    var task: RequestTask = .requestPlain
    var headers: [String: String]? = nil
    var sampleData: Data = Data()
    var validationType: ValidationType = .none
    var authorizationType: AuthorizationType? = nil

    var baseURL: URL { URL(string: base)! }

    init(_ server: LocalHTTPServer, _ path: String, method: HTTPRequest.Method = .get, task: RequestTask = .requestPlain) {
        base = server.baseURL
        self.path = path
        self.method = method
        self.task = task
    }
}

/// Records what plugins see, in order.
final class Recorder: Sendable {
    private let events = Locked<[String]>([])
    func add(_ event: String) { events.withLock { $0.append(event) } }
    var all: [String] { events.withLock { $0 } }
}

/// A plugin that records each stage.
struct RecordingPlugin: PluginType {
    let name: String
    let recorder: Recorder

    func prepare(_ request: TransportRequest, target: any TargetType) async throws -> TransportRequest {
        recorder.add("\(name).prepare")
        var request = request
        request.headerFields.append(HTTPField(name: HTTPField.Name("X-Plugin-\(name)")!, value: "yes"))
        return request
    }

    func willSend(_ request: TransportRequest, target: any TargetType) async { recorder.add("\(name).willSend") }

    func didReceive(_ result: Result<ApiResponse, CurlewError>, target: any TargetType) async {
        switch result {
        case .success(let response): recorder.add("\(name).didReceive(\(response.statusCode))")
        case .failure(let error): recorder.add("\(name).didReceive(\(error.isCancellation ? "cancelled" : "error"))")
        }
    }

    func process(_ result: Result<ApiResponse, CurlewError>, target: any TargetType) async -> Result<ApiResponse, CurlewError> {
        recorder.add("\(name).process")
        return result
    }
}

/// Runs `body` with a server and a fresh session, stopping both afterwards.
func withServer<T>(
    _ handler: @escaping LocalHTTPServer.Handler, _ body: (LocalHTTPServer, CurlSession) async throws -> T
) async throws -> T {
    let server = try await LocalHTTPServer.start(handler: handler)
    let session = try CurlSession()
    defer { session.syncShutdown() }
    do {
        let result = try await body(server, session)
        try await server.shutdown()
        return result
    } catch {
        try await server.shutdown()
        throw error
    }
}

/// Expects a CurlewError from `operation`.
func curlewError<T>(_ operation: () async throws -> T, sourceLocation: SourceLocation = #_sourceLocation) async -> CurlewError? {
    do {
        _ = try await operation()
        Issue.record("expected a CurlewError", sourceLocation: sourceLocation)
        return nil
    } catch let error as CurlewError {
        return error
    } catch {
        Issue.record("expected a CurlewError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
