// Curlew — running a short-lived child to completion and collecting what it printed.

import Foundation

extension TestProcess {
    /// What a child that ran to completion left behind.
    package struct Completion: Sendable {
        /// The exit status; -1 when it did not exit normally (a signal, or killed at the timeout).
        package let status: Int32
        package let standardOutput: Data
        package let standardError: String
    }

    /// Runs `executable` with stdin from `/dev/null` and its output in files (no pipe can fill up),
    /// waits for it to exit (SIGTERM after `timeout`) and returns its status and output.
    package static func run(
        executable: String, arguments: [String], timeout: Duration, name: String? = nil
    ) async throws(TestInfrastructureError) -> Completion {
        let process = try launch(
            executable: executable, arguments: arguments, standardInput: .null, standardOutput: .file, name: name)
        if await !process.waitForExit(timeout: timeout) { await process.stop() }
        return Completion(
            status: await process.exitStatus() ?? -1, standardOutput: process.standardOutput,
            standardError: process.standardError)
    }
}
