// Curlew — a Python test server from Tests/Servers that announces its port on its first line of stdout.

import Foundation

/// A script in Tests/Servers that listens on 127.0.0.1, prints `{"port": N}` as its first line of
/// stdout, and exits when its stdin closes (so also when the test process ends). Later lines of stdout,
/// if the script writes any, are read with ``nextLine(timeout:)``; lines written to its stdin with
/// ``write(_:)``.
package final class ScriptServer: Sendable {
    /// The port the server listens on.
    package let port: Int
    /// The script's file name in Tests/Servers.
    package let script: String
    /// The running script.
    package let process: TestProcess

    private init(port: Int, script: String, process: TestProcess) {
        self.port = port
        self.script = script
        self.process = process
    }

    /// Starts `python Tests/Servers/<script> arguments…` and waits (up to `timeout`) for its port.
    ///
    /// - Throws: ``TestInfrastructureError`` with the script's stderr when Python or the script fails,
    ///   or no port arrives in time.
    package static func start(
        script: String, arguments: [String], timeout: Duration = .seconds(15)
    ) async throws(TestInfrastructureError) -> ScriptServer {
        let process = try TestServerScripts.launch(script, arguments: arguments)
        func failure(_ reason: String) -> TestInfrastructureError {
            process.terminate()
            let log = process.standardError
            return TestInfrastructureError(
                description: "\(script) \(arguments.joined(separator: " ")): \(reason)\n"
                    + "stderr:\n\(log.isEmpty ? "(empty)" : log)")
        }
        guard let line = await process.nextLine(timeout: timeout) else {
            throw failure(process.standardOutputEnded ? "exited before printing its port" : "printed no port within \(timeout)")
        }
        struct PortLine: Decodable { let port: Int }
        guard let decoded = try? JSONDecoder().decode(PortLine.self, from: Data(line.utf8)), decoded.port > 0 else {
            throw failure("expected {\"port\": N}, got \(line.debugDescription)")
        }
        return ScriptServer(port: decoded.port, script: script, process: process)
    }

    /// What the script wrote to stderr so far.
    package var standardError: String {
        process.standardError
    }

    /// The next line the script printed after its port; nil at its end, or when none arrives within `timeout`.
    package func nextLine(timeout: Duration) async -> String? {
        await process.nextLine(timeout: timeout)
    }

    /// Writes to the script's stdin; false once it is closed or the write fails.
    @discardableResult
    package func write(_ text: String) -> Bool {
        process.write(text)
    }

    /// Stops the script: closes its stdin, sends SIGTERM and waits for it to exit (SIGKILL after 5 s).
    package func stop() async {
        await process.stop()
    }
}
