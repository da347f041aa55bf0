// Describe an API as an enum of targets, then let an endpoint show the request each one makes.

// snippet.hide
import Curlew
import Foundation
// snippet.show

enum GitHub: TargetType {
    case zen
    case userProfile(String)
    case userRepositories(String)
    case branches(String, protected: Bool)

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

    var headers: [String: String]? { ["Accept": "application/vnd.github+json"] }

    var sampleData: Data { Data("Design for failure.".utf8) }

    var validationType: ValidationType { .successCodes }
}

for target in [GitHub.zen, .userProfile("octocat"), .userRepositories("octocat"), .branches("curlew", protected: true)] {
    let request = try Endpoint.default(for: target).urlRequest()
    print(request.method.rawValue, request.url)
}
