// Curlew — tls_server.py on loopback: HTTPS/1.1 answering every request with a report of its connection.

import Foundation
import CurlewEngine

/// `tls_server.py` running on 127.0.0.1: HTTPS/1.1 with keep-alive, answering every request with a
/// JSON report of the connection (``TLSEcho``). A request to `/close` is answered with
/// `Connection: close`, so the next request needs a new connection (and can resume the TLS session);
/// a query `delay=MS` on any path delays the answer, so that requests overlap.
///
/// Call ``stop()`` when done (``withTLSTestServer(_:_:)`` does). The server also exits when this
/// process does: it watches its stdin, a pipe only this process writes to.
package final class TLSTestServer: Sendable {
    /// Which host name a URL uses; the fixture leaves carry both as subject alternative names.
    package enum Host: String, Sendable {
        case ipv4 = "127.0.0.1"
        case localhost = "localhost"
    }

    private let server: ScriptServer

    private init(server: ScriptServer) {
        self.server = server
    }

    /// The port the server listens on.
    package var port: Int {
        server.port
    }

    /// `https://127.0.0.1:PORT/path` (or `https://localhost:PORT/path`).
    package func url(_ path: String = "/", host: Host = .ipv4) -> String {
        "https://\(host.rawValue):\(port)\(path.hasPrefix("/") ? path : "/" + path)"
    }

    /// What the server wrote to stderr so far (only with ``TLSServerOptions/verbose``, or errors).
    package var standardError: String {
        server.standardError
    }

    /// Whether the server process is still running.
    package var isRunning: Bool {
        server.process.isRunning
    }

    /// Starts a server and waits (up to `timeout`) for the port it listens on.
    ///
    /// - Throws: ``TestInfrastructureError`` with the server's stderr when Python or the script
    ///   fails, or no port arrives in time.
    package static func start(_ options: TLSServerOptions, timeout: Duration = .seconds(15)) async throws -> TLSTestServer {
        TLSTestServer(server: try await ScriptServer.start(script: "tls_server.py", arguments: options.arguments, timeout: timeout))
    }

    /// Stops the server: closes its stdin, sends SIGTERM and waits for it to exit (SIGKILL after 5 s).
    package func stop() async {
        await server.stop()
    }

    /// Closes the server's stdin only, which it treats as the request to exit.
    package func closeStandardInput() {
        server.process.closeInput()
    }

    /// Waits for the server process to exit; returns false if it is still running after `timeout`.
    package func waitForExit(timeout: Duration) async -> Bool {
        await server.process.waitForExit(timeout: timeout)
    }
}

extension TLSTestServer {
    private static let sharedServers = Locked<[[String]: Task<TLSTestServer, any Error>]>([:])
    private static let startedSharedServers = Locked<[TLSTestServer]>([])

    /// A server for `options` shared by every test of this process that asks for the same options,
    /// started on first use and stopped when the process exits, so that not every test runs a Python
    /// process of its own. Its connection numbers and counts include other tests' connections.
    package static func shared(_ options: TLSServerOptions) async throws -> TLSTestServer {
        let task = sharedServers.withLock { servers in
            if let task = servers[options.arguments] { return task }
            if servers.isEmpty { atexit { TLSTestServer.stopSharedServers() } }
            let task = Task {
                let server = try await TLSTestServer.start(options)
                startedSharedServers.withLock { $0.append(server) }
                return server
            }
            servers[options.arguments] = task
            return task
        }
        return try await task.value
    }

    /// Ends the shared servers (they would also exit once this process's end closes their stdin) and
    /// removes their logs.
    private static func stopSharedServers() {
        let servers = startedSharedServers.withLock { servers in
            defer { servers = [] }
            return servers
        }
        for server in servers {
            server.server.process.terminate()
            server.server.process.removeFiles()
        }
    }
}

/// Runs `body` with a started server and always stops it.
package func withTLSTestServer<T>(
    _ options: TLSServerOptions, _ body: (TLSTestServer) async throws -> T
) async throws -> T {
    let server = try await TLSTestServer.start(options)
    return try await ensuring({ try await body(server) }, cleanUp: { await server.stop() })
}
