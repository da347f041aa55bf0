// Curlew — a launched `Process`, its stdin, and when it exited (also when Foundation does not notice).

import CurlewEngine
import Foundation

/// A `Process` shared between ``TestProcess`` and Foundation's termination callback.
///
/// Foundation learns that a child exited when a socket the child inherited closes; should another
/// child have inherited that socket too (launched at the same moment, see ``TestProcess``'s launch
/// lock), the termination handler waits for that one as well, and a test waiting for a short-lived
/// child would wait for a server that lives as long as the test process (seen: a zombie
/// `tls_server.py` and a test that never ended). So an exit is also recognised from `/proc`: a child
/// that is a zombie, or gone, has exited.
final class ProcessBox: Sendable {
    private struct State {
        var input: FileHandle?
        var exited = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let process: Process
    private let state: Locked<State>  // a pthread mutex, which the thread sanitizer understands

    /// Watches `process` (not yet running); `input` is the writing end of its stdin pipe, if any.
    init(_ process: Process, input: FileHandle?) {
        self.process = process
        state = Locked(State(input: input))
        process.terminationHandler = { [weak self] _ in self?.markExited() }
    }

    var isRunning: Bool {
        if state.withLock({ $0.exited }) { return false }
        let pid = process.processIdentifier
        guard pid > 0, Self.hasEnded(pid) else { return true }
        markExited()
        return false
    }

    /// Whether the child `pid` is a zombie or no longer exists.
    private static func hasEnded(_ pid: Int32) -> Bool {
        guard let stat = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return true }
        // "pid (command) S ...": the state follows the last ')'.
        guard let close = stat.lastIndex(of: UInt8(ascii: ")")), close + 2 < stat.endIndex else { return false }
        return stat[close + 2] == UInt8(ascii: "Z")
    }

    private func markExited() {
        let waiters = state.withLock { state in
            state.exited = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Writes to the process's stdin; false once it is closed or the write fails.
    func write(_ text: String) -> Bool {
        state.withLock { state in
            guard let input = state.input else { return false }
            do {
                try input.write(contentsOf: Data(text.utf8))
                return true
            } catch {
                return false
            }
        }
    }

    func closeInput() {
        let input = state.withLock { state in
            defer { state.input = nil }
            return state.input
        }
        try? input?.close()
    }

    /// Closes stdin and sends SIGTERM, unless the process has exited.
    func terminate() {
        closeInput()
        if isRunning, process.processIdentifier > 0 { Foundation.kill(process.processIdentifier, SIGTERM) }
    }

    /// Sends SIGKILL, unless the process has exited.
    func kill() {
        if isRunning, process.processIdentifier > 0 { Foundation.kill(process.processIdentifier, SIGKILL) }
    }

    func waitForExit() async {
        // Polls `/proc` meanwhile, in case the termination handler is never called.
        let poller = Task.detached { [weak self] in
            while let box = self, box.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.exited { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
        poller.cancel()
    }

    /// The exit status of a child that has exited, also when Foundation has not noticed yet; -1 when it
    /// did not exit normally.
    func exitStatus() async -> Int32 {
        if !process.isRunning { return process.terminationStatus }
        // Still a zombie: read its status without reaping it (Foundation still will).
        var info = siginfo_t()
        let pid = process.processIdentifier
        if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid == pid {
            return info.si_code == CLD_EXITED ? info._sifields._sigchld.si_status : -1
        }
        // Reaped already: Foundation is about to say so.
        let deadline = ContinuousClock.now + .seconds(2)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return process.isRunning ? -1 : process.terminationStatus
    }
}
