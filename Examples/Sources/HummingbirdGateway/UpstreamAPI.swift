// The upstream JSON API this service calls, described as Curlew targets.

import Curlew
import Foundation

/// The calls this service makes to its upstream API.
///
/// The targets name the production upstream; the service's configuration sends them elsewhere through
/// the provider's `baseURL` (see ``GatewayApp``).
enum UpstreamAPI: ApiErrorMessageTarget {
    /// `GET /users/{id}`: one user.
    case user(id: Int)
    /// `GET /slow?seconds=N`: an answer that takes `seconds` to come.
    case slow(seconds: Int)

    /// Every non-2xx body of this API decodes as ``UpstreamError``.
    typealias ErrorMessage = UpstreamError

    /// The production upstream; a provider made with `baseURL:` (from `UPSTREAM_URL`) replaces it.
    var baseURL: URL { URL(string: "https://users.example.com")! }

    var path: String {
        switch self {
        case .user(let id): "/users/\(id)"
        case .slow: "/slow"
        }
    }

    var method: HTTPRequest.Method { .get }

    var task: RequestTask {
        switch self {
        case .user: .requestPlain
        case .slow(let seconds): .requestParameters(parameters: ["seconds": .int(seconds)], encoding: URLEncoding.queryString)
        }
    }

    var headers: [String: String]? { ["Accept": "application/json"] }
}

/// A user, as the upstream sends it and as this service passes it on.
struct User: Codable, Sendable {
    var id: Int
    var name: String
}

/// What the slow upstream call answers.
struct SlowAnswer: Codable, Sendable {
    var sleptSeconds: Double

    enum CodingKeys: String, CodingKey {
        case sleptSeconds = "slept_seconds"
    }
}

/// The upstream's error body: `{"error": "not_found", "message": "no user 42"}`.
struct UpstreamError: Decodable, Sendable {
    /// A stable, machine-readable code.
    var error: String
    /// What went wrong, for people.
    var message: String
}
