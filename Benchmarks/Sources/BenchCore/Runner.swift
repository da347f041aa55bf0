// Curlew benchmarks — runs a workload through a client and prints one JSON line of figures.

// FoundationEssentials and Glibc only: the harness must not load all of Foundation (about 9 MiB of
// RSS) into the Curlew client, whose peak RSS it reports.
import Dispatch
import Glibc
import Histogram

/// Why a request did not count as correct.
public struct BenchFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A client ready to run a workload: one request at a time, and figures of its own to report.
public struct BenchClient: Sendable {
    /// Makes one request; returns the body length and throws on a wrong status.
    public let perform: @Sendable () async throws -> Int
    /// Extra figures after the run, given the request count (e.g. Curlew's loop-thread CPU).
    public let extraFigures: (@Sendable (Int) -> [(String, String)])?

    public init(_ perform: @escaping @Sendable () async throws -> Int, extraFigures: (@Sendable (Int) -> [(String, String)])? = nil) {
        self.perform = perform
        self.extraFigures = extraFigures
    }
}

/// Runs `workload` with `concurrency` workers calling the client's `perform`, and prints the figures as
/// one JSON line.
public func runWorkload(client: String, workload: Workload, benchClient: BenchClient) async -> Bool {
    let perform = benchClient.perform
    let idleRSS = currentRSSKiB()
    let clock = ContinuousClock()
    let usageBefore = cpuSeconds()
    let switchesBefore = contextSwitches()
    let start = clock.now
    // Workers keep plain arrays of latencies (one histogram per worker would cost ~240 KiB each, which
    // at 10,000 workers dwarfs the clients being measured); one histogram is built at the end.
    let results = await withTaskGroup(of: ([UInt64], Int, String?).self) { group in
        for worker in 0..<workload.concurrency {
            let share = workload.requests / workload.concurrency + (worker < workload.requests % workload.concurrency ? 1 : 0)
            group.addTask {
                var latencies: [UInt64] = []
                latencies.reserveCapacity(share)
                var errors = 0
                var firstError: String?
                for _ in 0..<share {
                    // Read as the C client reads its clock: `ContinuousClock` and `Duration` arithmetic cost
                    // about 400 instructions per request, which counted as the client's.
                    let began = monotonicNanoseconds()
                    do {
                        let bytes = try await perform()
                        if bytes != workload.expectedBytes {
                            throw BenchFailure("body of \(bytes) bytes, expected \(workload.expectedBytes)")
                        }
                    } catch {
                        errors += 1
                        if firstError == nil { firstError = "\(error)" }
                    }
                    let micros = (monotonicNanoseconds() &- began + 500) / 1000
                    latencies.append(max(1, micros))
                }
                return (latencies, errors, firstError)
            }
        }
        var merged = Histogram<UInt64>(highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)
        var errors = 0
        var firstError: String?
        for await (latencies, workerErrors, workerFirst) in group {
            for latency in latencies { merged.record(latency) }
            errors += workerErrors
            firstError = firstError ?? workerFirst
        }
        return (merged, errors, firstError)
    }
    let seconds = (clock.now - start).seconds
    let cpu = cpuSeconds() - usageBefore
    let switches = contextSwitches() - switchesBefore
    let (histogram, errors, firstError) = results
    let figures: [(String, String)] = [
        ("client", json(client)), ("workload", json(workload.name)), ("requests", "\(workload.requests)"),
        ("errors", "\(errors)"), ("seconds", "\(seconds)"), ("rps", "\(Double(workload.requests) / seconds)"),
        // Bytes moved either way: the uploads' bodies count too.
        ("mibps", "\(Double(workload.requests * (workload.expectedBytes + (workload.uploadBytes ?? 0))) / seconds / 1_048_576)"),
        ("p50_us", "\(histogram.valueAtPercentile(50))"), ("p99_us", "\(histogram.valueAtPercentile(99))"),
        ("cpu_us_per_request", "\(cpu * 1e6 / Double(workload.requests))"), ("peak_rss_kib", "\(peakRSSKiB())"),
        ("csw", "\(switches)"),
        ("idle_rss_kib", "\(idleRSS)"), ("cpu_percent", "\(cpu / seconds * 100)"),
        ("first_error", json(firstError ?? "")),
    ] + (benchClient.extraFigures?(workload.requests) ?? [])
    writeLine("{" + figures.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}", to: 1)
    return errors == 0
}

/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always)
public func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// User plus system CPU time of the whole process.
public func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Voluntary plus involuntary context switches of the whole process (every thread) so far.
public func contextSwitches() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_nvcsw + usage.ru_nivcsw
}

/// Peak resident set size (VmHWM).
public func peakRSSKiB() -> Int {
    statusFigure("VmHWM:")
}

/// Resident set size now (VmRSS): the client set up, before its first request.
public func currentRSSKiB() -> Int {
    statusFigure("VmRSS:")
}

/// A kB figure of /proc/self/status.
func statusFigure(_ prefix: String) -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix(prefix) {
            return Int(text.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
        }
    }
    return 0
}

/// `text` as a JSON string literal.
func json(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where scalar.value < 0x20: out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// Writes one line to a file descriptor.
func writeLine(_ text: String, to descriptor: Int32) {
    var line = text + "\n"
    line.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}

/// Raises the open-file limit to the hard limit (10,000 sockets at once need it).
public func raiseFileLimit() {
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
}

/// Command-line arguments: CLIENT WORKLOAD BASE_URL [SCALE]; runs a synchronous main that waits on a
/// detached task (valgrind cannot run an async main).
public func benchMain(clients: [String: @Sendable (Workload, String) async throws -> BenchClient]) -> Never {
    let arguments = CommandLine.arguments
    guard arguments.count >= 4, let makeClient = clients[arguments[1]],
        let workload = Workload.named(arguments[2], scale: arguments.count > 4 ? Double(arguments[4]) ?? 1 : 1)
    else {
        writeLine("usage: \(arguments[0]) \(clients.keys.sorted().joined(separator: "|")) WORKLOAD BASE_URL [SCALE]", to: 2)
        exit(2)
    }
    raiseFileLimit()
    let done = DispatchSemaphore(value: 0)
    let outcome = OutcomeBox()
    Task.detached {
        do {
            let benchClient = try await makeClient(workload, arguments[3])
            outcome.ok = await runWorkload(client: arguments[1], workload: workload, benchClient: benchClient)
        } catch {
            writeLine("setup failed: \(error)", to: 2)
        }
        done.signal()
    }
    done.wait()
    exit(outcome.ok ? 0 : 1)
}

/// Carries the result out of the detached task; written once before the semaphore is signalled.
final class OutcomeBox: @unchecked Sendable {
    // @unchecked: written by the benchmark task before `done.signal()`, read after `done.wait()`.
    var ok = false
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
