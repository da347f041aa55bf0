// Curlew — where the test servers' scripts live and which Python runs them.

import Foundation

/// The helper scripts in Tests/Servers and the interpreter that runs them (`python3`, or
/// `CURLEW_TEST_PYTHON`).
package enum TestServerScripts {
    /// Tests/Servers, next to this target's folder.
    package static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Servers")

    /// The absolute path of the script `name` in Tests/Servers.
    package static func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    /// The interpreter: `CURLEW_TEST_PYTHON`, else `python3` from the `PATH`.
    package static var python: String {
        ProcessInfo.processInfo.environment["CURLEW_TEST_PYTHON"] ?? "python3"
    }

    /// Launches `python Tests/Servers/<script> arguments…` (through `/usr/bin/env`, which searches the `PATH`).
    package static func launch(
        _ script: String, arguments: [String], standardInput: TestProcess.Input = .pipe,
        standardOutput: TestProcess.Output = .lines
    ) throws(TestInfrastructureError) -> TestProcess {
        try TestProcess.launch(
            executable: "/usr/bin/env", arguments: [python, path(script)] + arguments, standardInput: standardInput,
            standardOutput: standardOutput, name: script)
    }

    /// Runs `python Tests/Servers/<script> arguments…` to completion (see ``TestProcess/run(executable:arguments:timeout:name:)``).
    package static func run(
        _ script: String, arguments: [String], timeout: Duration
    ) async throws(TestInfrastructureError) -> TestProcess.Completion {
        try await TestProcess.run(
            executable: "/usr/bin/env", arguments: [python, path(script)] + arguments, timeout: timeout, name: script)
    }
}
