// Curlew — the demo's target enum for the embedded GitHub-like API.

import Curlew
import Foundation

/// The demo API, described the Moya way.
enum DemoTarget: TargetType, AccessTokenAuthorizable {
    case zen
    case userProfile(String)
    case userRepositories(String)
    case login(username: String, password: String)
    case broken
    case slow

    /// Where the API would live; the demo points its providers at the embedded server instead.
    var baseURL: URL { URL(string: "https://api.example.com")! }

    var path: String {
        switch self {
        case .zen: "/zen"
        case .userProfile(let name): "/users/\(name)"
        case .userRepositories(let name): "/users/\(name)/repos"
        case .login: "/login"
        case .broken: "/broken"
        case .slow: "/slow"
        }
    }

    var method: HTTPRequest.Method {
        switch self {
        case .login: .post
        default: .get
        }
    }

    var task: RequestTask {
        switch self {
        case .login(let username, let password):
            .requestParameters(parameters: ["username": .string(username), "password": .string(password)], encoding: JSONEncoding.default)
        case .userRepositories:
            .requestParameters(parameters: ["sort": "pushed"], encoding: URLEncoding.default)
        default:
            .requestPlain
        }
    }

    var headers: [String: String]? { ["Accept": "application/json"] }

    var sampleData: Data {
        switch self {
        case .zen: Data("Half measures are as bad as nothing at all.".utf8)
        case .userProfile(let name): Data(#"{"login":"\#(name)","id":1,"name":"Sample","public_repos":0}"#.utf8)
        default: Data()
        }
    }

    var authorizationType: AuthorizationType? {
        switch self {
        case .userProfile: .bearer
        default: nil
        }
    }
}

struct DemoUser: Decodable, Sendable {
    let login: String
    let name: String
    let publicRepos: Int

    enum CodingKeys: String, CodingKey {
        case login, name
        case publicRepos = "public_repos"
    }
}

struct DemoRepo: Decodable, Sendable {
    let name: String
    let stargazersCount: Int

    enum CodingKeys: String, CodingKey {
        case name
        case stargazersCount = "stargazers_count"
    }
}

struct DemoToken: Decodable, Sendable {
    let token: String
    let expiresIn: Int

    enum CodingKeys: String, CodingKey {
        case token
        case expiresIn = "expires_in"
    }
}
