// Curlew — the demo's small GitHub-like API, served on loopback by CurlewTesting's LocalHTTPServer.

import CurlewTesting

/// A small GitHub-like API served by a `LocalHTTPServer`.
///
/// Routes: `GET /zen`; `GET /users` (users with `joined` as seconds since 1970); `GET /users/:name`
/// (404 JSON error for `ghost`); `GET /users/:name/repos`; `GET /repos/:owner/:repo/branches`;
/// `POST /login` with JSON `{"username","password"}` (200 with a token when the password is
/// `hunter2`, else 401 `{"error_message": ...}`); `GET /broken` (500 with an HTML page);
/// `GET /slow` (answers after 5 s).
enum DemoAPI {
    /// Starts the API on 127.0.0.1 at a free port.
    static func start() async throws -> LocalHTTPServer {
        try await LocalHTTPServer.start(handler: route)
    }

    /// Answers one request of the demo API.
    @Sendable static func route(_ request: ServerRequest) async -> ServerReply {
        let parts = request.path.split(separator: "/").map(String.init)
        switch (request.method, parts.count, parts.first) {
        case ("GET", 1, "zen"):
            return .text("Practicality beats purity.")
        case ("GET", 1, "users"):
            return .json(
                #"{"users":[{"id":1,"name":"Ada","joined":1700000000},{"id":2,"name":"Grace","joined":1700086400}]}"#)
        case ("GET", 2, "users") where parts[1] == "ghost":
            return .json(#"{"error_message":"Not Found"}"#, status: 404)
        case ("GET", 2, "users"):
            let name = parts[1]
            return .json(
                #"{"login":"\#(name)","id":583231,"name":"The \#(name.capitalized)","public_repos":3,"created_at":"2011-01-25T18:44:36Z"}"#
            )
        case ("GET", 3, "users") where parts[2] == "repos":
            let owner = parts[1]
            let repos = [("hello-world", 1_500, "Swift"), ("curlew", 42, "Swift"), ("dotfiles", 7, "Shell")]
            let items = repos.enumerated().map { index, repo in
                #"{"id":\#(index + 1),"name":"\#(repo.0)","full_name":"\#(owner)/\#(repo.0)","stargazers_count":\#(repo.1),"language":"\#(repo.2)"}"#
            }
            return .json("[" + items.joined(separator: ",") + "]")
        case ("GET", 4, "repos") where parts[3] == "branches":
            return .json(#"[{"name":"main","protected":true},{"name":"dev","protected":false}]"#)
        case ("POST", 1, "login"):
            if request.bodyText.contains(#""password":"hunter2""#) {
                return .json(#"{"token":"c7d83mdla_3ms-0a1b2c3d","expires_in":3600}"#)
            }
            return .json(#"{"error_message":"Invalid username or password"}"#, status: 401)
        case ("GET", 1, "broken"):
            return .html(
                "<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1><p>The server encountered an unexpected condition.</p></body></html>",
                status: 500)
        case ("GET", 1, "slow"):
            return .delayed(.seconds(5), .json(#"{"ok":true}"#))
        default:
            return .json(#"{"error_message":"Not Found"}"#, status: 404)
        }
    }
}

extension String {
    fileprivate var capitalized: String { prefix(1).uppercased() + dropFirst() }
}
