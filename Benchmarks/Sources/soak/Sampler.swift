// Curlew — the soak's samples: the process's open descriptors, threads and resident memory, and the
// session's own counters, as one JSON line.
import BenchShims
import CurlewEngine
import Foundation

enum Sampler {
    static func emit(
        round: Int, start: ContinuousClock.Instant, sent: Int, session: CurlSession, tally: Tally, atRest: Bool = false
    ) {
        let statistics = session.statistics
        let status = procStatus()
        let counts = tally.snapshot()
        let descriptors = openDescriptors()
        var sample: [String: Any] = [
            "round": round, "seconds": seconds(since: start), "requests": sent,
            "fds": descriptors.all, "sockets": descriptors.sockets, "threads": status["Threads"] ?? -1, "rssKiB": status["VmRSS"] ?? -1,
            "openConnections": statistics.openConnections, "pooledHandles": statistics.pooledHandles,
            "handlesCreated": statistics.handlesCreated, "activeTransfers": statistics.activeTransfers,
            "queuedTransfers": statistics.queuedTransfers, "socketsWatched": statistics.socketsWatched,
            "bufferedBytes": statistics.bufferedBytes, "connectionsOpened": statistics.connectionsOpened,
            "completed": statistics.completedTransfers, "failed": statistics.failedTransfers,
            "cancelled": statistics.cancelledTransfers, "unexpected": counts.unexpected,
            "heapInUseKiB": bench_heap_in_use() / 1024, "heapFreeKiB": bench_heap_free() / 1024,
            "threadNames": threadNames(), "atRest": atRest,
        ]
        if atRest {
            // What malloc keeps free is most of what RSS moves by: the resident size once it gave back
            // what it can tells the part that is held from the part that is cached.
            bench_heap_trim()
            sample["rssAfterTrimKiB"] = procStatus()["VmRSS"] ?? -1
        }
        printJSON(sample)
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    static func printJSON(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    /// Open descriptors, and how many of them are sockets (the listing's own descriptor left out).
    private static func openDescriptors() -> (all: Int, sockets: Int) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return (-1, -1) }
        var all = 0
        var sockets = 0
        for name in names {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)
            else { continue }  // the listing's own descriptor, closed by now
            all += 1
            if target.hasPrefix("socket:") { sockets += 1 }
        }
        return (all, sockets)
    }

    /// The threads' names (/proc/self/task/*/comm), sorted: which thread a change in the count is.
    private static func threadNames() -> [String] {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return [] }
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }.sorted()
    }

    /// `Threads` and `VmRSS` (KiB) from /proc/self/status.
    private static func procStatus() -> [String: Int] {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return [:] }
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
            if parts.count >= 2, let value = Int(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }
}
