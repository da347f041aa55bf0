// Curlew — Debian's nghttpd on loopback (package nghttp2-server), with a document root of its own.

import Foundation

/// Debian's `nghttpd` on 127.0.0.1, on a port picked free just before it starts (retried when another
/// process takes it first). It runs under a small shell that ends it when this process closes its stdin.
package final class NghttpdServer: Sendable {
    package let port: Int
    package let isTLS: Bool
    /// The document root (a temporary directory, removed by ``stop()``).
    package let documentRoot: String
    private let process: TestProcess

    private init(port: Int, isTLS: Bool, documentRoot: String, process: TestProcess) {
        self.port = port
        self.isTLS = isTLS
        self.documentRoot = documentRoot
        self.process = process
    }

    deinit {
        try? FileManager.default.removeItem(atPath: documentRoot)
    }

    /// Where `nghttpd` is, if installed (`make test-deps` installs it).
    package static var executable: String? {
        ["/usr/sbin/nghttpd", "/usr/bin/nghttpd", "/usr/local/bin/nghttpd"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Runs nghttpd in the background and waits on it; ends it when stdin closes or on SIGTERM, and
    /// exits with its status when it exits by itself (a port taken, say). SIGKILL: nghttpd inherits the
    /// test process's blocked signals (SIGTERM and SIGINT among them) and would never see those.
    private static let supervisor = """
        exec 3<&0
        "$0" "$@" </dev/null &
        pid=$!
        trap 'kill -KILL $pid 2>/dev/null' TERM INT
        ( while read -r _; do :; done; kill -KILL $pid 2>/dev/null ) <&3 &
        wait $pid; status=$?
        wait $pid 2>/dev/null
        exit $status
        """

    package func url(_ path: String = "/", host: String = "127.0.0.1") -> String {
        "\(isTLS ? "https" : "http")://\(host):\(port)\(path.hasPrefix("/") ? path : "/" + path)"
    }

    /// What nghttpd and its shell wrote to stdout and stderr so far.
    package var standardError: String {
        process.standardError
    }

    /// Writes the documents, then starts nghttpd on a free port and waits until it accepts connections.
    package static func start(_ options: NghttpdOptions, attempts: Int = 5) async throws -> NghttpdServer {
        guard let executable else {
            throw TestInfrastructureError(description: "nghttpd is not installed (make test-deps)")
        }
        let documentRoot = FileManager.default.temporaryDirectory
            .appendingPathComponent("curlew-nghttpd-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: documentRoot, withIntermediateDirectories: true)
        for (name, text) in options.documents {
            try Data(text.utf8).write(to: URL(fileURLWithPath: documentRoot).appendingPathComponent(name))
        }
        var failures: [String] = []
        for _ in 0..<max(1, attempts) {
            let port = closedPort()
            let process = try TestProcess.launch(
                executable: "/bin/bash",
                arguments: ["-c", supervisor, executable] + options.arguments(port: port, documentRoot: documentRoot),
                standardOutput: .standardErrorLog, name: "nghttpd")
            let deadline = ContinuousClock.now + .seconds(10)
            while process.isRunning, !canConnect(port: port), ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            if process.isRunning, canConnect(port: port) {
                return NghttpdServer(port: port, isTLS: options.identity != nil, documentRoot: documentRoot, process: process)
            }
            process.terminate()
            await process.waitForExit()
            failures.append("port \(port): " + process.standardError)
        }
        try? FileManager.default.removeItem(atPath: documentRoot)
        throw TestInfrastructureError(
            description: "nghttpd did not start in \(attempts) attempts:\n" + failures.joined(separator: "\n"))
    }

    /// Stops nghttpd and removes its document root.
    package func stop() async {
        await process.stop()
        try? FileManager.default.removeItem(atPath: documentRoot)
    }
}

/// Runs `body` with a started nghttpd and always stops it.
package func withNghttpd<T>(_ options: NghttpdOptions, _ body: (NghttpdServer) async throws -> T) async throws -> T {
    let server = try await NghttpdServer.start(options)
    return try await ensuring({ try await body(server) }, cleanUp: { await server.stop() })
}
