// Curlew — a child's standard output, line by line, with a timeout on each line.

import CurlewEngine
import Foundation

/// Reads a pipe line by line on a background thread until end of file; ``next(timeout:)`` hands out
/// the lines in order.
final class LineReader: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<String?, Never>
    }

    private struct State {
        var lines: [String] = []
        var ended = false
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())  // a pthread mutex, which the thread sanitizer understands

    /// Starts reading `descriptor`, which this reader closes at end of file.
    init(descriptor: Int32) {
        Thread.detachNewThread { [self] in
            var pending = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer[..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    deliver(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            close(descriptor)
            endOfFile()
        }
    }

    /// Whether the pipe reached end of file (the lines read before it may still be waiting).
    var reachedEndOfFile: Bool {
        state.withLock { $0.ended }
    }

    private func deliver(_ line: String) {
        let waiter = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.lines.append(line)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.continuation.resume(returning: line)
    }

    private func endOfFile() {
        let waiters = state.withLock { state in
            state.ended = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// The next line; nil at end of file, or when none arrives within `timeout`.
    func next(timeout: Duration) async -> String? {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let timer = Task { [self] in
            try await Task.sleep(for: timeout)
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: nil)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let immediate = state.withLock { state -> String?? in
                if !state.lines.isEmpty { return .some(state.lines.removeFirst()) }
                if state.ended { return .some(nil) }
                state.waiters.append(Waiter(id: id, continuation: continuation))
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }
}
