// Curlew — openapi_server.py on loopback: the operations of Tests/OpenAPIFixture/openapi.yaml over HTTP/1.1,
// for the OpenAPI transport's tests.

import CurlewEngine
import Foundation

/// `openapi_server.py` on 127.0.0.1 (cleartext HTTP/1.1): see the script's documentation for its routes
/// (`/greet`, `/events`, `/form`, `/download` (GET and HEAD), `/upload`, `/echo`, `/login`, `/slow`,
/// `/flaky`, `/stats`, and `/openapi.yaml`, the document itself).
package final class OpenAPITestServer: Sendable {
    private let server: ScriptServer

    private init(server: ScriptServer) {
        self.server = server
    }

    /// The port the server listens on.
    package var port: Int { server.port }

    /// `http://127.0.0.1:PORT`: the generated client's server URL.
    package var baseURL: String { "http://127.0.0.1:\(port)" }

    /// ``baseURL`` as a URL, as the generated `Client(serverURL:transport:)` takes it.
    package var serverURL: URL { URL(string: baseURL)! }

    /// `http://127.0.0.1:PORT/path`.
    package func url(_ path: String) -> String {
        baseURL + (path.hasPrefix("/") ? path : "/" + path)
    }

    /// What the server wrote to stderr so far (errors only).
    package var standardError: String { server.standardError }

    /// Starts a server and waits for the port it listens on.
    package static func start() async throws -> OpenAPITestServer {
        let server = try await ScriptServer.start(script: "openapi_server.py", arguments: [])
        return OpenAPITestServer(server: server)
    }

    /// Stops the server: closes its stdin, sends SIGTERM and waits for it to exit (SIGKILL after 5 s).
    package func stop() async {
        await server.stop()
    }
}

extension OpenAPITestServer {
    private static let sharedServer = Locked<Task<OpenAPITestServer, any Error>?>(nil)

    /// A server shared by every test of this process, started on first use; it exits with the process (it
    /// watches its stdin). Tests keep apart by their own `/flaky` keys.
    package static func shared() async throws -> OpenAPITestServer {
        let task = sharedServer.withLock { current in
            if let current { return current }
            let started = Task { try await OpenAPITestServer.start() }
            current = started
            return started
        }
        return try await task.value
    }
}

/// Runs `body` with a started `openapi_server.py` of its own and always stops it.
package func withOpenAPITestServer<T>(_ body: (OpenAPITestServer) async throws -> T) async throws -> T {
    let server = try await OpenAPITestServer.start()
    return try await ensuring({ try await body(server) }, cleanUp: { await server.stop() })
}
