// Curlew — the one way the tests launch a child process (the test servers, the fixture script, nghttpd).

import CTestSupportShims
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

    /// Starts `executable` with `arguments`.
    ///
    /// The child gets its stdin, stdout and stderr and no other descriptor of this process: the pipes
    /// and files are made close-on-exec, handed over with `dup2`, and every other descriptor is closed
    /// in the child (`posix_spawn_file_actions_addclosefrom_np`), so children launched at the same
    /// moment never inherit each other's pipes (a server would then not see its stdin close).
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
        var opened: [Int32] = []
        defer { for fd in opened { close(fd) } }
        func openFile(_ path: String, _ flags: Int32) throws(TestInfrastructureError) -> Int32 {
            let fd = open(path, flags | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw TestInfrastructureError(description: "cannot open \(path): errno \(errno)") }
            opened.append(fd)
            return fd
        }
        func makePipe() throws(TestInfrastructureError) -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard curlew_test_pipe_cloexec(&fds) == 0 else {
                throw TestInfrastructureError(description: "cannot make a pipe: errno \(errno)")
            }
            return (fds[0], fds[1])
        }
        let errorFD = try openFile(standardErrorFile, O_WRONLY | O_CREAT | O_TRUNC)
        let nullFD = try openFile("/dev/null", O_RDWR)
        var inputPipe: (read: Int32, write: Int32)?
        var outputPipe: (read: Int32, write: Int32)?
        if standardInput == .pipe {
            let created = try makePipe()
            inputPipe = created
            opened.append(created.read)  // the child's end: ours closes after the spawn
        }
        if standardOutput == .lines {
            let created = try makePipe()
            outputPipe = created
            opened.append(created.write)
        }
        let outputFD: Int32
        switch standardOutput {
        case .lines: outputFD = outputPipe?.write ?? nullFD
        case .file: outputFD = try openFile(standardOutputFile ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC)
        case .standardErrorLog: outputFD = errorFD
        case .null: outputFD = nullFD
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPipe?.read ?? nullFD, 0)
        posix_spawn_file_actions_adddup2(&actions, outputFD, 1)
        posix_spawn_file_actions_adddup2(&actions, errorFD, 2)
        curlew_test_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, so a signal meant for the tests (Ctrl-C) does not reach it twice; and
        // the default signal dispositions and mask, not the test process's.
        var defaults = sigset_t()
        sigfillset(&defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let result = argv.withUnsafeBufferPointer { argvBuffer -> Int32 in
            guard let argvBase = argvBuffer.baseAddress else { return EINVAL }
            return posix_spawn(&pid, executable, &actions, &attributes, argvBase, environ)
        }
        guard result == 0 else {
            if let inputPipe { close(inputPipe.write) }
            if let outputPipe { close(outputPipe.read) }
            try? FileManager.default.removeItem(atPath: standardErrorFile)
            if let standardOutputFile { try? FileManager.default.removeItem(atPath: standardOutputFile) }
            throw TestInfrastructureError(description: "cannot run \(executable) (\(name)): error \(result)")
        }
        let box = ProcessBox(pid: pid, input: inputPipe?.write)
        return TestProcess(
            name: name, box: box, lines: outputPipe.map { LineReader(descriptor: $0.read) },
            standardErrorFile: standardErrorFile, standardOutputFile: standardOutputFile)
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
        standardOutputFile.flatMap { try? FileContents.read(atPath: $0) } ?? Data()
    }

    /// What the child wrote to stderr so far.
    package var standardError: String {
        ((try? FileContents.read(atPath: standardErrorFile)) ?? Data()).text
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
