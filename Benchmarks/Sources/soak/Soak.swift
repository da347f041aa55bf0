// Curlew — the soak (issue 33): a million requests through one session, mixed across protocols, body kinds,
// cancellations and a hostile server, with the process's fds, threads, RSS and the session's counters
// sampled between rounds, when nothing is in flight, so samples compare like with like.
//
// usage: soak CONFIG.json   (written by Benchmarks/soak.py; see SoakConfiguration)
// Prints one JSON line per sample on stdout and a summary line at the end; exits 1 on an unexpected
// outcome (a request to a well-behaved server that failed, a hostile answer that was accepted).
import CurlewEngine
import Foundation
import Synchronization

/// What soak.py passes: the servers' URLs and the run's bounds.
struct SoakConfiguration: Decodable, Sendable {
    /// nginx over HTTP/1.1 (`/small`, `/big`, `/upload`, `/slow`, `/sse/full/…`).
    let http: String
    /// nginx over TLS (HTTP/1.1 by ALPN).
    let https: String
    /// nginx over TLS with HTTP/2.
    let h2: String
    /// The hostile server (`/?mode=N`).
    let hostile: String
    /// The CA that signed nginx's certificate.
    let caFile: String
    /// A file to upload.
    let uploadFile: String
    /// Requests to send in all.
    let requests: Int
    /// The run stops after this long even if `requests` were not all sent.
    let seconds: Int
    /// Workers (requests in flight at once, at most).
    let concurrency: Int
    /// Scenario iterations per worker per round (a sample follows each round).
    let perRound: Int
    /// One scenario alone, by name (nil: the mix).
    let only: String?
    /// Seconds of quiet after the last round before a last sample (0: none).
    let restSeconds: Int
}

@main
struct Soak {
    static func main() async throws {
        guard CommandLine.arguments.count == 2,
            let data = FileManager.default.contents(atPath: CommandLine.arguments[1])
        else {
            FileHandle.standardError.write(Data("usage: soak CONFIG.json\n".utf8))
            exit(2)
        }
        let configuration = try JSONDecoder().decode(SoakConfiguration.self, from: data)

        var session = SessionConfiguration()
        session.tls.trustRoots = .file(configuration.caFile)
        session.totalTimeout = .seconds(30)
        session.idleTimeout = .seconds(10)
        let curl = try CurlSession(configuration: session)
        let scenarios = Scenarios(configuration: configuration, session: curl)
        let tally = Tally()

        let start = ContinuousClock.now
        let deadline = start + .seconds(configuration.seconds)
        var sent = 0
        var round = 0
        Sampler.emit(round: 0, start: start, sent: 0, session: curl, tally: tally)
        while sent < configuration.requests && ContinuousClock.now < deadline {
            round += 1
            let thisRound = round
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<configuration.concurrency {
                    group.addTask {
                        var random = SplitMix(seed: UInt64(thisRound) &* 1_000_003 &+ UInt64(worker))
                        for _ in 0..<configuration.perRound {
                            await scenarios.runOne(&random, tally: tally)
                        }
                    }
                }
            }
            sent += configuration.concurrency * configuration.perRound
            // A reader that leaves a streamed response returns before the loop has removed its transfer:
            // the sample waits (up to 2 s) for the loop to catch up, so a transfer still counted is one
            // that stayed.
            let settled = ContinuousClock.now + .seconds(2)
            while curl.statistics.activeTransfers + curl.statistics.queuedTransfers > 0, ContinuousClock.now < settled {
                try? await Task.sleep(for: .milliseconds(1))
            }
            Sampler.emit(round: round, start: start, sent: sent, session: curl, tally: tally)
        }
        // At rest: libdispatch retires a task-pool worker that found no work for 5 s, so after a longer quiet
        // spell the pool is back to what idle work needs. A thread still there is one that stayed.
        if configuration.restSeconds > 0 {
            // soak.py reads the threads from outside while this process has nothing to run.
            Sampler.printJSON(["resting": true])
            try? await Task.sleep(for: .seconds(configuration.restSeconds))
            Sampler.emit(round: round + 1, start: start, sent: sent, session: curl, tally: tally, atRest: true)
        }
        await curl.shutdown()
        let outcome = tally.snapshot()
        let summary: [String: Any] = [
            "summary": true, "requests": sent, "seconds": Sampler.seconds(since: start),
            "unexpected": outcome.unexpected, "unexpectedExamples": outcome.examples,
            "byScenario": outcome.byScenario, "secondsByScenario": outcome.timeByScenario, "longestByScenario": outcome.longestByScenario, "errors": outcome.errors,
        ]
        Sampler.printJSON(summary)
        exit(outcome.unexpected == 0 ? 0 : 1)
    }
}
