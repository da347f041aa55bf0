// Curlew benchmarks — server-sent events (issue 17): Curlew's client, on the engine's
// `CurlSession.events(for:)` (or, with BENCH_SSE_CLIENT=provider, a provider's `events(for:)`), one child
// task per stream. Arguments and JSON figures match the C reference
// (Benchmarks/c-client/sse.c).
//
// usage: bench-sse parse URL EVENTS DATA_BYTES [FILE]
//            one stream read at full speed; EVENTS and DATA_BYTES are what the file holds (checked); with
//            FILE (the same file, local), then the parser alone on it in memory, for comparison
//        bench-sse streams URL COUNT EVENTS [CA_FILE]
//            COUNT streams at once on one session, each expected to deliver events with ids 1…EVENTS in
//            order and then end; with CA_FILE over HTTPS (HTTP/2 through ALPN)

import BenchCore
import BenchShims
import Curlew
import Glibc
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The figures printed as one JSON object (numbers, booleans and strings without quotes or backslashes).
struct Figures {
    private var fields: [(String, String)] = []
    mutating func add(_ name: String, _ value: Int) { fields.append((name, "\(value)")) }
    mutating func add(_ name: String, _ value: Double) { fields.append((name, value.isFinite ? "\(value)" : "null")) }
    mutating func add(_ name: String, _ value: Bool) { fields.append((name, "\(value)")) }
    mutating func add(_ name: String, _ value: String) {
        let clean = value.map { $0 == "\"" || $0 == "\\" || $0.isNewline ? " " : String($0) }.joined()
        fields.append((name, "\"\(clean)\""))
    }
    func print() {
        writeText("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}\n", to: 1)
    }
}

/// Writes `text` to a file descriptor (1: the figures, 2: messages), unbuffered.
func writeText(_ text: String, to descriptor: Int32 = 2) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var nanoseconds: Double { Double(components.seconds) * 1e9 + Double(components.attoseconds) / 1e9 }
}

/// A stream that reads to its end: no reconnection, so the sequence ends (nil) when the body does.
let oneAttempt = EventStreamPolicy(reconnects: false)

/// parse: one stream of the pre-generated file at full speed. Counts the events and their data bytes and
/// reads each event's first data byte (the C client does the same with its copy of the data).
func parseRate(url: String, expectedEvents: Int, expectedData: Int, file: String?) async throws -> Bool {
    var configuration = SessionConfiguration()
    configuration.maxResponseBodySize = 1 << 30
    let session = try CurlSession(configuration: configuration)
    let idleRSS = currentRSSKiB()
    let loopBefore = session.statistics.loopCPUTime
    let cpuBefore = cpuSeconds()
    let clock = ContinuousClock()
    let start = clock.now
    var events = 0
    var dataBytes = 0
    var checksum: UInt = 0
    var failure = ""
    do {
        for try await event in session.events(for: TransportRequest(url: url), policy: oneAttempt) {
            events += 1
            dataBytes += event.dataBytes.count
            checksum &+= UInt(event.dataBytes.first ?? 0)
        }
    } catch {
        failure = "\(error)"
    }
    let seconds = (clock.now - start).seconds
    let cpu = cpuSeconds() - cpuBefore
    let loop = (session.statistics.loopCPUTime - loopBefore).nanoseconds
    let valid = failure.isEmpty && events == expectedEvents && dataBytes == expectedData
    if failure.isEmpty, !valid {
        failure = "\(events) events / \(dataBytes) data bytes, expected \(expectedEvents) / \(expectedData)"
    }
    var figures = Figures()
    figures.add("client", "curlew-engine")
    figures.add("workload", "sse-parse-rate")
    figures.add("events", events)
    figures.add("data_bytes", dataBytes)
    figures.add("checksum", Int(bitPattern: checksum))
    figures.add("seconds", seconds)
    figures.add("events_per_second", Double(events) / seconds)
    figures.add("cpu_ns_per_event", cpu * 1e9 / Double(max(1, events)))
    figures.add("loop_cpu_ns_per_event", loop / Double(max(1, events)))
    figures.add("cpu_percent", cpu / seconds * 100)
    figures.add("mibps", Double(expectedData) / seconds / 1_048_576)
    figures.add("idle_rss_kib", idleRSS)
    figures.add("peak_rss_kib", peakRSSKiB())
    await session.shutdown()
    if let file {
        if let alone = parserAlone(file: file), alone.events == expectedEvents, alone.dataBytes == expectedData,
            alone.checksum == checksum
        {
            figures.add("parser_ns_per_event", alone.nanoseconds)
        } else {
            failure = "the parser alone did not find the file's events"
        }
    }
    figures.add("valid", valid && failure.isEmpty)
    figures.add("first_error", failure)
    figures.print()
    return valid && failure.isEmpty
}

/// The parser alone, for comparison: the file read into memory and handed to `EventStreamParser` in
/// 16 KiB chunks (the engine's receive buffer for event streams) on this thread, each event counted and
/// touched as above. Returns the events, their data bytes, the sum of their first data bytes and the CPU
/// ns per event.
func parserAlone(file: String) -> (events: Int, dataBytes: Int, checksum: UInt, nanoseconds: Double)? {
    guard let handle = fopen(file, "rb") else { return nil }
    defer { fclose(handle) }
    var bytes: [UInt8] = []
    var block = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let read = block.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, handle) }
        if read <= 0 { break }
        bytes.append(contentsOf: block[..<read])
    }
    var parser = EventStreamParser()
    var events: [ServerSentEvents.Event] = []
    var count = 0
    var dataBytes = 0
    var checksum: UInt = 0
    let before = cpuSeconds()
    var offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + 16 * 1024)
        do {
            try parser.parse(bytes[offset..<end], into: &events)
        } catch {
            return nil
        }
        for event in events {
            count += 1
            dataBytes += event.dataBytes.count
            checksum &+= UInt(event.dataBytes.first ?? 0)
        }
        events.removeAll(keepingCapacity: true)
        offset = end
    }
    let cpu = cpuSeconds() - before
    return (count, dataBytes, checksum, cpu * 1e9 / Double(max(1, count)))
}

/// What one stream saw.
struct StreamOutcome: Sendable {
    var events = 0
    var inOrder = true
    var first: ContinuousClock.Instant?
    var last: ContinuousClock.Instant?
    var largestGap: Duration = .zero
    var failure: String?
}

/// Counters the streams share with the sampler.
final class Progress: Sendable {
    let opened = Atomic<Int>(0)
    let events = Atomic<Int>(0)
    let finished = Atomic<Int>(0)
}

/// A moment of the run, as the sampler saw it.
struct Sample {
    var at: ContinuousClock.Instant
    var rss: Int
    var loopCPU: Duration
    var cpu: Double
    var events: Int
    /// Bytes malloc has handed out and not had back (in use plus mapped blocks), in KiB:
    /// the live heap, which RSS also counts with what the allocator keeps after frees.
    var heapInUse: Int
}

func sample(_ session: CurlSession, _ progress: Progress) -> Sample {
    Sample(
        at: .now, rss: currentRSSKiB(), loopCPU: session.statistics.loopCPUTime, cpu: cpuSeconds(),
        events: progress.events.load(ordering: .relaxed), heapInUse: bench_heap_in_use() / 1024)
}

/// The paced stream as a provider's target.
struct PacedStream: TargetType {
    let baseURL: URL
    var path: String { "" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Reads one stream's events, checking their ids (1, 2, …) and timing them.
func read<Events: AsyncSequence>(
    _ events: Events, into outcome: inout StreamOutcome, progress: Progress
) async throws where Events.Element == ServerSentEvents.Event {
    for try await event in events {
        let now = ContinuousClock.now
        outcome.events += 1
        if Int(event.id) != outcome.events { outcome.inOrder = false }
        if let last = outcome.last {
            outcome.largestGap = max(outcome.largestGap, now - last)
        } else {
            outcome.first = now
            progress.opened.add(1, ordering: .relaxed)
        }
        outcome.last = now
        progress.events.add(1, ordering: .relaxed)
    }
}

/// streams: `count` streams at once on one session, each checked: events with ids 1…`expected` in order,
/// then the end of the body.
func streams(url: String, count: Int, expected: Int, caFile: String?) async throws -> Bool {
    raiseFileLimit()
    var configuration = SessionConfiguration()
    // The pool's limits raised for the workload: every stream is a running transfer (and over HTTP/1.1 a
    // connection of its own).
    configuration.maxConnectionsPerHost = count
    configuration.maxConnectionsTotal = count
    configuration.maxIdleConnections = max(1024, count)
    configuration.maxPooledHandles = max(256, count)
    if let caFile { configuration.tls.trustRoots = .file(caFile) }
    let session = try CurlSession(configuration: configuration)
    let progress = Progress()
    let before = sample(session, progress)
    let request = TransportRequest(url: url)
    // Through a provider: every attempt runs the provider's stages (no plugins, no middleware).
    let viaProvider = getenv("BENCH_SSE_CLIENT").map { String(cString: $0) } == "provider"
    guard let base = URL(string: url) else { throw BenchFailure("not a URL: \(url)") }
    let provider = Provider<PacedStream>(session: session)
    let target = PacedStream(baseURL: base)

    // The sampler: the moment every stream is open (past its first event), and the middle of the run
    // (half the events delivered): the idle streams' memory then.
    // BENCH_SSE_TRACE=1: a line a second on standard error (streams open, events, the engine's transfers
    // and connections), to see how the streams ramp up.
    let traces = getenv("BENCH_SSE_TRACE") != nil
    let sampler = Task<(Sample?, Sample?, Int?), Never> {
        var allOpen: Sample?
        var middle: Sample?
        var trimmedRSS: Int?
        var traced = 0
        while progress.finished.load(ordering: .relaxed) < count, traces || middle == nil || allOpen == nil {
            try? await Task.sleep(for: .milliseconds(50))
            if traces, (ContinuousClock.now - before.at) >= .seconds(traced) {
                traced += 1
                let now = session.statistics
                writeText(
                    "t=\(traced - 1)s open streams \(progress.opened.load(ordering: .relaxed)) events \(progress.events.load(ordering: .relaxed)) "
                        + "active \(now.activeTransfers) queued \(now.queuedTransfers) connections \(now.openConnections) "
                        + "RSS \(currentRSSKiB() / 1024) MiB\n")
            }
            if allOpen == nil, progress.opened.load(ordering: .relaxed) == count { allOpen = sample(session, progress) }
            if allOpen != nil, middle == nil, progress.events.load(ordering: .relaxed) >= count * expected / 2 {
                middle = sample(session, progress)
                // RSS again once malloc has returned the free memory it can: what the open phase's
                // transient allocations left behind, apart from what the streams hold.
                bench_heap_trim()
                trimmedRSS = currentRSSKiB()
            }
        }
        return (allOpen, middle, trimmedRSS)
    }

    let outcomes = await withTaskGroup(of: StreamOutcome.self) { group in
        for _ in 0..<count {
            group.addTask {
                var outcome = StreamOutcome()
                do {
                    if viaProvider {
                        try await read(provider.events(for: target, policy: oneAttempt), into: &outcome, progress: progress)
                    } else {
                        try await read(session.events(for: request, policy: oneAttempt), into: &outcome, progress: progress)
                    }
                } catch {
                    outcome.failure = "\(error)"
                }
                progress.finished.add(1, ordering: .relaxed)
                return outcome
            }
        }
        var all: [StreamOutcome] = []
        all.reserveCapacity(count)
        for await outcome in group { all.append(outcome) }
        return all
    }
    let end = sample(session, progress)
    let (allOpen, middle, trimmedRSS) = await sampler.value
    let statistics = session.statistics
    let hosts = await session.hostStatistics()

    let events = outcomes.reduce(0) { $0 + $1.events }
    let wrong = outcomes.filter { $0.events != expected || !$0.inOrder }.count
    let failed = outcomes.filter { $0.failure != nil }.count
    let spans = outcomes.compactMap { outcome in outcome.first.flatMap { first in outcome.last.map { ($0 - first).seconds } } }
    let firsts = outcomes.compactMap { $0.first.map { ($0 - before.at).seconds } }
    let valid = wrong == 0 && failed == 0
    var figures = Figures()
    figures.add("client", viaProvider ? "curlew-provider" : "curlew-engine")
    figures.add("streams", count)
    figures.add("events", events)
    figures.add("expected_events", count * expected)
    figures.add("fewest_events", outcomes.map(\.events).min() ?? 0)
    figures.add("most_events", outcomes.map(\.events).max() ?? 0)
    figures.add("wrong_streams", wrong)
    figures.add("failed_streams", failed)
    figures.add("seconds", (end.at - before.at).seconds)
    figures.add("all_open_seconds", allOpen.map { ($0.at - before.at).seconds } ?? -1)
    figures.add("last_first_event_seconds", firsts.max() ?? -1)
    let sortedFirsts = firsts.sorted()
    figures.add("first_event_p50_seconds", sortedFirsts.isEmpty ? -1 : sortedFirsts[sortedFirsts.count / 2])
    figures.add("first_event_p90_seconds", sortedFirsts.isEmpty ? -1 : sortedFirsts[sortedFirsts.count * 9 / 10])
    figures.add("min_span_seconds", spans.min() ?? 0)
    figures.add("max_span_seconds", spans.max() ?? 0)
    figures.add("largest_gap_seconds", outcomes.map(\.largestGap.seconds).max() ?? 0)
    figures.add("idle_rss_kib", before.rss)
    figures.add("open_rss_kib", allOpen?.rss ?? 0)
    figures.add("mid_rss_kib", middle?.rss ?? 0)
    figures.add("peak_rss_kib", peakRSSKiB())
    // Memory per open stream: the middle of the run (every stream open and idle between events).
    figures.add("rss_per_stream_kib", Double((middle?.rss ?? 0) - before.rss) / Double(count))
    // The same after malloc_trim, and the live heap per open stream (libcurl's buffers count whole here,
    // touched or not).
    figures.add("trimmed_rss_per_stream_kib", Double((trimmedRSS ?? 0) - before.rss) / Double(count))
    figures.add("heap_per_stream_kib", Double((middle?.heapInUse ?? 0) - before.heapInUse) / Double(count))
    let allEvents = Double(max(1, events))
    figures.add("cpu_ns_per_event", (end.cpu - before.cpu) * 1e9 / allEvents)
    figures.add("loop_cpu_ns_per_event", (end.loopCPU - before.loopCPU).nanoseconds / allEvents)
    // The steady state: from every stream open to the end (the connections set up before it).
    if let allOpen {
        let steadyEvents = Double(max(1, end.events - allOpen.events))
        figures.add("steady_cpu_ns_per_event", (end.cpu - allOpen.cpu) * 1e9 / steadyEvents)
        figures.add("steady_loop_cpu_ns_per_event", (end.loopCPU - allOpen.loopCPU).nanoseconds / steadyEvents)
        figures.add("steady_events", end.events - allOpen.events)
    }
    figures.add("loop_cpu_seconds", (end.loopCPU - before.loopCPU).seconds)
    figures.add("cpu_percent", (end.cpu - before.cpu) / (end.at - before.at).seconds * 100)
    figures.add("peak_open_connections", statistics.peakOpenConnections)
    figures.add("connections_opened", statistics.connectionsOpened)
    figures.add("host_peak_open_connections", hosts.map(\.peakOpenConnections).max() ?? 0)
    figures.add("valid", valid)
    figures.add(
        "first_error",
        outcomes.first { $0.failure != nil }?.failure
            ?? (wrong > 0 ? "\(wrong) streams missed events or got them out of order" : ""))
    figures.print()
    await session.shutdown()
    return valid
}

func main() async -> Int32 {
    let arguments = CommandLine.arguments
    do {
        if arguments.count >= 5, arguments[1] == "parse", let events = Int(arguments[3]), let bytes = Int(arguments[4]) {
            let file = arguments.count > 5 ? arguments[5] : nil
            return try await parseRate(url: arguments[2], expectedEvents: events, expectedData: bytes, file: file) ? 0 : 1
        }
        if arguments.count >= 5, arguments[1] == "streams", let count = Int(arguments[3]), let events = Int(arguments[4]) {
            let ok = try await streams(
                url: arguments[2], count: count, expected: events, caFile: arguments.count > 5 ? arguments[5] : nil)
            return ok ? 0 : 1
        }
    } catch {
        writeText("setup failed: \(error)\n")
        return 1
    }
    writeText("usage: bench-sse parse URL EVENTS DATA_BYTES [FILE] | streams URL COUNT EVENTS [CA_FILE]\n")
    return 2
}

exit(await main())
