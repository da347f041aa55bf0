// Curlew — the one way the tests launch a child process (the test servers, the fixture script, nghttpd).

import CurlewEngine
import Foundation

/// A child process of the tests: its stdin a pipe only this process writes to (or `/dev/null`), its
/// stdout read line by line (or collected in a file), its stderr collected in a log file.
///
/// Children are launched one at a time, so that none inherits another's pipes. A child with a stdin
/// pipe is expected to exit when the pipe closes: when ``closeInput()`` or ``terminate()`` is called,
/// and at the latest when the test process ends. Writing to the stdin of a child that died fails
/// instead of raising SIGPIPE. Dropping the last reference terminates the child and removes its files.
package final class TestProcess: Sendable {
    /// Where the child's standard input comes from.
    package enum Input: Sendable {
        /// A pipe only this process writes to (``write(_:)``, ``closeInput()``).
        case pipe
        /// `/dev/null`.
        case null
    }

    /// Where the child's standard output goes.
    package enum Output: Sendable {
        /// A pipe, read line by line (``nextLine(timeout:)``).
        case lines
        /// A temporary file (``standardOutput``), so that no pipe can fill up.
        case file
        /// The standard error log (``standardError``), as `2>&1` would.
        case standardErrorLog
        /// `/dev/null`.
        case null
    }

    /// What the child is called in messages (a script's or executable's name).
    package let name: String
    private let box: ProcessBox
    private let lines: LineReader?
    private let standardErrorFile: String
    private let standardOutputFile: String?

    private init(name: String, box: ProcessBox, lines: LineReader?, standardErrorFile: String, standardOutputFile: String?) {
        self.name = name
        self.box = box
        self.lines = lines
        self.standardErrorFile = standardErrorFile
        self.standardOutputFile = standardOutputFile
    }

    deinit {
        box.terminate()
        removeFiles()
    }

    /// Held while a child is launched, from creating its pipes to closing the parent's copies of the
    /// child's ends. Foundation gives each child descriptors that are not close-on-exec (its pipes and
    /// the socket through which it learns that the child exited); a child launched at the same moment
    /// from another thread would inherit them, and then a server would not see its stdin close, or
    /// Foundation would not notice a child's exit until the other child exits too.
    /// An `Int` rather than `Void`: the thread sanitizer has reported the inout access to a zero-sized
    /// state under this lock as a race (the access's address is the object's own).
    private static let launching = Locked(0)

    /// Starts `executable` with `arguments`.
    ///
    /// - Parameter name: What messages call the child; the executable's file name by default.
    /// - Throws: ``TestInfrastructureError`` when the log files cannot be made or the child cannot start.
    package static func launch(
        executable: String, arguments: [String], standardInput: Input = .pipe, standardOutput: Output = .lines,
        name: String? = nil
    ) throws(TestInfrastructureError) -> TestProcess {
        ignoreBrokenPipes()
        let name = name ?? URL(fileURLWithPath: executable).lastPathComponent
        let base = FileManager.default.temporaryDirectory
            .appendingPathComponent("curlew-\(name)-\(getpid())-\(UUID().uuidString.prefix(8))").path
        let standardErrorFile = base + ".err"
        let standardOutputFile = standardOutput == .file ? base + ".out" : nil
        guard let errorHandle = createFile(standardErrorFile) else {
            throw TestInfrastructureError(description: "cannot create \(standardErrorFile)")
        }
        var outputHandle: FileHandle?
        if let standardOutputFile {
            guard let handle = createFile(standardOutputFile) else {
                try? errorHandle.close()
                try? FileManager.default.removeItem(atPath: standardErrorFile)
                throw TestInfrastructureError(description: "cannot create \(standardOutputFile)")
            }
            outputHandle = handle
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments

        let (box, outputPipe) = try launching.withLock { _ throws(TestInfrastructureError) -> (ProcessBox, Pipe?) in
            let inputPipe = standardInput == .pipe ? Pipe() : nil
            let outputPipe = standardOutput == .lines ? Pipe() : nil
            process.standardInput = inputPipe ?? FileHandle.nullDevice
            switch standardOutput {
            case .lines: process.standardOutput = outputPipe
            case .file: process.standardOutput = outputHandle
            case .standardErrorLog: process.standardOutput = errorHandle
            case .null: process.standardOutput = FileHandle.nullDevice
            }
            process.standardError = errorHandle
            let box = ProcessBox(process, input: inputPipe?.fileHandleForWriting)
            defer {
                // The child holds its own copies now; ours would keep the pipes open after it exits.
                try? errorHandle.close()
                try? outputHandle?.close()
                try? inputPipe?.fileHandleForReading.close()
                try? outputPipe?.fileHandleForWriting.close()
            }
            do {
                try process.run()
            } catch {
                try? FileManager.default.removeItem(atPath: standardErrorFile)
                if let standardOutputFile { try? FileManager.default.removeItem(atPath: standardOutputFile) }
                throw TestInfrastructureError(description: "cannot run \(executable) (\(name)): \(error)")
            }
            return (box, outputPipe)
        }
        return TestProcess(
            name: name, box: box, lines: outputPipe.map { LineReader($0.fileHandleForReading) },
            standardErrorFile: standardErrorFile, standardOutputFile: standardOutputFile)
    }

    /// A new empty file at `path`, open for writing; nil if it cannot be made.
    private static func createFile(_ path: String) -> FileHandle? {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { return nil }
        return FileHandle(forWritingAtPath: path)
    }

    // MARK: Output

    /// The next line of stdout (``Output/lines``); nil at end of file, or when none arrives within `timeout`.
    package func nextLine(timeout: Duration) async -> String? {
        await lines?.next(timeout: timeout)
    }

    /// Whether stdout (``Output/lines``) reached end of file: the child exited or closed it.
    package var standardOutputEnded: Bool {
        lines?.reachedEndOfFile ?? false
    }

    /// What the child wrote to stdout so far (``Output/file``; empty otherwise).
    package var standardOutput: Data {
        standardOutputFile.flatMap { FileManager.default.contents(atPath: $0) } ?? Data()
    }

    /// What the child wrote to stderr so far.
    package var standardError: String {
        (FileManager.default.contents(atPath: standardErrorFile) ?? Data()).text
    }

    /// Removes the log files (once nothing will read them).
    package func removeFiles() {
        try? FileManager.default.removeItem(atPath: standardErrorFile)
        if let standardOutputFile { try? FileManager.default.removeItem(atPath: standardOutputFile) }
    }

    // MARK: Input

    /// Writes to the child's stdin (``Input/pipe``); false once it is closed or the write fails.
    @discardableResult
    package func write(_ text: String) -> Bool {
        box.write(text)
    }

    /// Closes the child's stdin, which a test server takes as the request to exit.
    package func closeInput() {
        box.closeInput()
    }

    // MARK: Ending

    /// Whether the child is still running.
    package var isRunning: Bool {
        box.isRunning
    }

    /// Closes stdin and sends SIGTERM, unless the child has exited.
    package func terminate() {
        box.terminate()
    }

    /// Sends SIGKILL, unless the child has exited.
    package func kill() {
        box.kill()
    }

    /// Waits for the child to exit.
    package func waitForExit() async {
        await box.waitForExit()
    }

    /// Waits for the child to exit; returns false if it is still running after `timeout`.
    package func waitForExit(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while box.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return !box.isRunning
    }

    /// Closes stdin, sends SIGTERM and waits for the child to exit; SIGKILL if it still runs after `grace`.
    package func stop(grace: Duration = .seconds(5)) async {
        terminate()
        if await !waitForExit(timeout: grace) {
            kill()
            await waitForExit()
        }
    }

    /// The exit status once the child has exited (-1 when it did not exit normally); nil while it runs.
    package func exitStatus() async -> Int32? {
        box.isRunning ? nil : await box.exitStatus()
    }
}

/// A write to a child's stdin after it died must fail, not kill the test process.
private func ignoreBrokenPipes() {
    _ = brokenPipesIgnored
}

private let brokenPipesIgnored: Bool = {
    signal(SIGPIPE, SIG_IGN)
    return true
}()
