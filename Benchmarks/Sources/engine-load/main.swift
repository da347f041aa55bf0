// Curlew — drives one engine session with N requests in flight and reports throughput and loop CPU.
//
// usage: engine-load URL CONCURRENCY TOTAL [--provider]
import CurlewEngine
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 4, let concurrency = Int(arguments[2]), let total = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: engine-load URL CONCURRENCY TOTAL\n".utf8))
    exit(2)
}
let url = arguments[1]

var limit = rlimit()
getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
limit.rlim_cur = limit.rlim_max
setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)

var configuration = SessionConfiguration()
configuration.maxConnectionsPerHost = 0
configuration.maxIdleConnections = max(1024, concurrency)
configuration.maxPooledHandles = max(256, concurrency)
let session = try CurlSession(configuration: configuration)

func rssKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
    }
    return 0
}

let request = TransportRequest(url: url)
let start = ContinuousClock.now
let cpuBefore = session.statistics.loopCPUTime
let (ok, failed, bytes) = await withTaskGroup(of: (Int, Int, Int).self) { group in
    let perWorker = total / concurrency
    for worker in 0..<concurrency {
        let count = perWorker + (worker < total % concurrency ? 1 : 0)
        group.addTask {
            var ok = 0, failed = 0, bytes = 0
            for _ in 0..<count {
                do {
                    let response = try await session.execute(request)
                    if response.status.code == 200 { ok += 1 } else { failed += 1 }
                    bytes += response.body.count
                } catch {
                    failed += 1
                    if failed == 1 { FileHandle.standardError.write(Data("\(error)\n".utf8)) }
                }
            }
            return (ok, failed, bytes)
        }
    }
    var sum = (0, 0, 0)
    for await part in group { sum = (sum.0 + part.0, sum.1 + part.1, sum.2 + part.2) }
    return sum
}
let elapsed = ContinuousClock.now - start
let stats = session.statistics
let loopCPU = stats.loopCPUTime - cpuBefore
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let cpuMicros = (Double(loopCPU.components.seconds) * 1e6 + Double(loopCPU.components.attoseconds) / 1e12)
print(
    String(
        format: "concurrency=%d total=%d ok=%d failed=%d bytes=%d wall=%.3fs req/s=%.0f loopCPU/req=%.2fus connections=%d epoll_ctl/req=%.3f peakRSS=%dKiB",
        concurrency, total, ok, failed, bytes, seconds, Double(ok) / seconds, cpuMicros / Double(max(ok, 1)),
        stats.connectionsOpened, Double(stats.epollControlCalls) / Double(max(ok, 1)), rssKiB()))
await session.shutdown()
exit(failed == 0 ? 0 : 1)
