// Curlew — h2_server.py on loopback: HTTP/2 (Python's `h2`) with faults on demand, and counts asked over stdin.

import CurlewEngine
import Foundation

/// `h2_server.py` running on 127.0.0.1 (TLS with a fixture identity and ALPN, or cleartext). See the
/// script's documentation for what each path does: `/ok`, `/delay?ms=N`, `/reset?code=…`,
/// `/refuse-once?tag=…`, `/goaway?keep=K`, `/bad-frame`, `/trailers`, `/set-cookie?c=…`, `/stats`.
///
/// ``stats(timeout:)`` asks it, over its stdin, what it counted, which opens no connection of its own.
/// The server exits when this process does: it watches its stdin, a pipe only this process writes to.
package final class H2TestServer: Sendable {
    /// Whether it speaks TLS (https URLs) or cleartext (http).
    package let isTLS: Bool
    private let server: ScriptServer
    /// One `stats` exchange at a time, so answers pair with questions.
    private let statsLock = Locked(0)  // Int, not Void: see TestProcess's launch lock

    private init(server: ScriptServer, isTLS: Bool) {
        self.server = server
        self.isTLS = isTLS
    }

    /// The port the server listens on.
    package var port: Int {
        server.port
    }

    /// `https://HOST:PORT/path` (http for a cleartext server). The fixture leaf covers `127.0.0.1`,
    /// `localhost`, `a.test` and `*.a.test`; names other than the IP need a host override.
    package func url(_ path: String = "/", host: String = "127.0.0.1") -> String {
        "\(isTLS ? "https" : "http")://\(host):\(port)\(path.hasPrefix("/") ? path : "/" + path)"
    }

    /// What the server wrote to stderr so far (only with ``H2ServerOptions/verbose``, or errors).
    package var standardError: String {
        server.standardError
    }

    /// Starts a server and waits (up to `timeout`) for the port it listens on.
    package static func start(_ options: H2ServerOptions, timeout: Duration = .seconds(15)) async throws -> H2TestServer {
        let server = try await ScriptServer.start(script: "h2_server.py", arguments: options.arguments, timeout: timeout)
        return H2TestServer(server: server, isTLS: options.identity != nil)
    }

    /// What the server counted so far, asked over its stdin (no connection is opened for it).
    package func stats(timeout: Duration = .seconds(10)) async throws -> H2ServerStats {
        let line: String? = await {
            // Pairs this question with the next answer line; the lock is held only while writing, and
            // answers come back in the order the questions were written.
            let written = statsLock.withLock { _ in server.write("stats\n") }
            guard written else { return nil }
            return await server.nextLine(timeout: timeout)
        }()
        guard let line else {
            throw TestInfrastructureError(description: "h2_server.py did not answer `stats`; stderr:\n\(standardError)")
        }
        return try JSONDecoder().decode(H2ServerStats.self, from: Data(line.utf8))
    }

    /// Polls ``stats(timeout:)`` every 10 ms until `condition` holds (or `seconds` pass); returns the
    /// last stats. The default bound is generous for the same reason as ``eventually(within:_:)``'s.
    package func stats(within seconds: Double = 20, until condition: (H2ServerStats) -> Bool) async throws -> H2ServerStats {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var current = try await stats()
        while !condition(current), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
            current = try await stats()
        }
        return current
    }

    /// Stops the server: closes its stdin, sends SIGTERM and waits for it to exit (SIGKILL after 5 s).
    package func stop() async {
        await server.stop()
    }
}

/// Runs `body` with a started `h2_server.py` and always stops it.
package func withH2TestServer<T>(_ options: H2ServerOptions, _ body: (H2TestServer) async throws -> T) async throws -> T {
    let server = try await H2TestServer.start(options)
    return try await ensuring({ try await body(server) }, cleanUp: { await server.stop() })
}
