// Curlew — cancellation latency: N transfers waiting on a slow endpoint are cancelled together;
// reports how long each task took from cancel() to its thrown cancellation (median and worst).
//
// usage: engine-cancel SLOW_URL COUNT
import CurlewEngine
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 3, let count = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: engine-cancel SLOW_URL COUNT\n".utf8))
    exit(2)
}
let session = try CurlSession()
let request = TransportRequest(url: arguments[1])
let clock = ContinuousClock()
let tasks = (0..<count).map { _ in
    Task { () -> (Bool, ContinuousClock.Instant) in
        do throws(TransportError) {
            _ = try await session.execute(request)
            return (false, clock.now)
        } catch {
            return (error.code == .cancelled, clock.now)
        }
    }
}
// Let every transfer reach the server.
while session.statistics.activeTransfers < count { try await Task.sleep(for: .milliseconds(5)) }
try await Task.sleep(for: .milliseconds(100))
var cancelledAt: [ContinuousClock.Instant] = []
for task in tasks {
    cancelledAt.append(clock.now)
    task.cancel()
}
var latencies: [Duration] = []
var allCancelled = true
for (index, task) in tasks.enumerated() {
    let (cancelled, finished) = await task.value
    allCancelled = allCancelled && cancelled
    latencies.append(finished - cancelledAt[index])
}
latencies.sort()
let stats = session.statistics
print(
    "count=\(count) allCancelled=\(allCancelled) median=\(latencies[latencies.count / 2]) worst=\(latencies[latencies.count - 1]) activeAfter=\(stats.activeTransfers) cancelled=\(stats.cancelledTransfers)"
)
// The session still works afterwards.
let after = try await session.execute(TransportRequest(url: arguments[1].replacingOccurrences(of: "/slow", with: "/small")))
print("next request after cancellation: status \(after.status.code)")
await session.shutdown()
