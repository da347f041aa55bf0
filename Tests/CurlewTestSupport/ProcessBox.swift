// Curlew — a child process's pid, stdin and exit, shared between the tests and the thread that reaps it.

import CurlewEngine
import Foundation

/// A running child: its stdin pipe (if any), and its exit, learned by a thread of its own blocked in
/// `waitpid` for it.
///
/// Children are started with `posix_spawn` rather than Foundation's `Process`, whose launch keeps run
/// loop sources on the launching thread and crashed the test process (a bad read inside `run()`)
/// when servers were started from several threads at once.
final class ProcessBox: Sendable {
    private struct State {
        var input: Int32?
        /// The raw `waitpid` status once the child has exited.
        var status: Int32?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let pid: pid_t
    private let state: Locked<State>  // a pthread mutex, which the thread sanitizer understands

    init(pid: pid_t, input: Int32?) {
        self.pid = pid
        state = Locked(State(input: input))
        let reaper = Thread { [self] in
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, 0) } while result == -1 && errno == EINTR
            markExited(result == pid ? status : -1)
        }
        reaper.start()
    }

    var isRunning: Bool { state.withLock { $0.status == nil } }

    private func markExited(_ status: Int32) {
        let (waiters, input) = state.withLock { state in
            state.status = status
            defer {
                state.waiters = []
                state.input = nil
            }
            return (state.waiters, state.input)
        }
        if let input { close(input) }
        for waiter in waiters { waiter.resume() }
    }

    /// Writes to the child's stdin; false once it is closed or the write fails (the child died).
    @discardableResult
    func write(_ text: String) -> Bool {
        state.withLock { state in
            guard let input = state.input else { return false }
            var bytes = Array(text.utf8)
            return bytes.withUnsafeMutableBytes { buffer -> Bool in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(input, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                    if written < 0, errno == EINTR { continue }
                    guard written > 0 else { return false }
                    offset += written
                }
                return true
            }
        }
    }

    func closeInput() {
        let input = state.withLock { state in
            defer { state.input = nil }
            return state.input
        }
        if let input { close(input) }
    }

    /// Closes stdin and sends SIGTERM, unless the child has exited.
    func terminate() {
        closeInput()
        if isRunning { _ = Glibc.kill(pid, SIGTERM) }
    }

    /// Sends SIGKILL, unless the child has exited.
    func kill() {
        if isRunning { _ = Glibc.kill(pid, SIGKILL) }
    }

    func waitForExit() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.status != nil { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The exit status of a child that has exited (waits for it); -1 when it did not exit normally.
    func exitStatus() async -> Int32 {
        await waitForExit()
        let status = state.withLock { $0.status } ?? -1
        // WIFEXITED: the low seven bits are zero; WEXITSTATUS: the next eight.
        return status >= 0 && status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
    }
}
