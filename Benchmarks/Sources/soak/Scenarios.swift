// Curlew — what the soak sends: small requests over HTTP/1.1, TLS and HTTP/2; streamed downloads read by
// readers that pause and sometimes stop; streamed and file uploads; event streams that reconnect;
// requests cancelled at random points; and a hostile server that closes, resets or lies.
import Curlew
import Foundation

/// One scenario per call, picked by the worker's generator. Weights are per thousand.
struct Scenarios: Sendable {
    let configuration: SoakConfiguration
    let session: CurlSession
    /// SOAK_ONLY=<name>[,<name>…]: the scenarios run alone, in their proportions (to find which one a figure
    /// comes from); nil: the mix (also when no name is known).
    private let only: Set<String>?

    init(configuration: SoakConfiguration, session: CurlSession) {
        self.configuration = configuration
        self.session = session
        let names = Set((configuration.only ?? "").split(separator: ",").map(String.init))
            .intersection(Self.ranges.map(\.name))
        only = names.isEmpty ? nil : names
    }

    /// Each scenario's name and the end of its range of picks (out of 1,000).
    private static let ranges: [(name: String, end: Int)] = [
        ("h1-get", 500), ("https-get", 640), ("h2-get", 780), ("download", 815), ("streamed-upload", 855),
        ("file-upload", 885), ("events", 905), ("cancelled", 955), ("hostile", 1000),
    ]

    func runOne(_ random: inout SplitMix, tally: Tally) async {
        var pick = Int.random(in: 0..<1000, using: &random)
        // A pick outside the chosen scenarios is drawn again.
        while let only, !only.contains(Self.name(of: pick)) { pick = Int.random(in: 0..<1000, using: &random) }
        let start = ContinuousClock.now
        let name = await run(pick, &random, tally)
        tally.count(name, seconds: Sampler.seconds(since: start))
    }

    /// The name of the scenario `pick` (0..<1000) falls on.
    private static func name(of pick: Int) -> String {
        ranges.first { pick < $0.end }?.name ?? ranges[ranges.count - 1].name
    }

    /// Runs the scenario `pick` falls on; returns its name.
    private func run(_ pick: Int, _ random: inout SplitMix, _ tally: Tally) async -> String {
        switch pick {
        case ..<500: await get(configuration.http, "h1-get", tally); return "h1-get"
        case ..<640: await get(configuration.https, "https-get", tally); return "https-get"
        case ..<780: await get(configuration.h2, "h2-get", tally); return "h2-get"
        case ..<815: await download(&random, tally); return "download"
        case ..<855: await streamedUpload(&random, tally); return "streamed-upload"
        case ..<885: await fileUpload(&random, tally); return "file-upload"
        case ..<905: await events(tally); return "events"
        case ..<955: await cancelled(&random, tally); return "cancelled"
        default: await hostile(&random, tally); return "hostile"
        }
    }

    // MARK: Small requests

    private func get(_ base: String, _ name: String, _ tally: Tally) async {
        do {
            let response = try await session.execute(TransportRequest(url: base + "/small"))
            if response.status.code != 200 || response.body.isEmpty {
                tally.unexpected(name, "status \(response.status.code), \(response.body.count) bytes")
            }
        } catch {
            tally.unexpected(name, "\(error)")
        }
    }

    // MARK: Streamed downloads

    /// A range of the 256 MiB file (64 KiB to 4 MiB) over HTTP/1.1 or HTTP/2, read by a reader that
    /// sleeps every few chunks; one in four stops reading at a random byte (the transfer is aborted).
    private func download(_ random: inout SplitMix, _ tally: Tally) async {
        let name = "download"
        let length = Int.random(in: 64 * 1024...4 * 1024 * 1024, using: &random)
        let stopAt: Int? = Bool.random(using: &random) && Bool.random(using: &random)
            ? Int.random(in: 0..<length, using: &random) : nil
        let pauseEvery = Int.random(in: 1...8, using: &random)
        let base = Bool.random(using: &random) ? configuration.http : configuration.h2
        var fields = HTTPFields()
        fields[.range] = "bytes=0-\(length - 1)"
        do {
            try await session.perform(TransportRequest(url: base + "/big", headerFields: fields)) { head, body in
                guard head.status.code == 206 else {
                    tally.unexpected(name, "status \(head.status.code)")
                    return
                }
                var received = 0
                var chunks = 0
                for try await chunk in body {
                    received += chunk.count
                    chunks += 1
                    if chunks % pauseEvery == 0 { try await Task.sleep(for: .milliseconds(1)) }
                    if let stopAt, received >= stopAt { return }
                }
                if received != length { tally.unexpected(name, "\(received) of \(length) bytes, \(head.httpVersion), pause every \(pauseEvery)") }
            }
        } catch {
            tally.unexpected(name, "\(error)")
        }
    }

    // MARK: Uploads

    /// 4 KiB to 1 MiB written by a producer, with or without a declared length, over HTTP/1.1 or HTTP/2.
    private func streamedUpload(_ random: inout SplitMix, _ tally: Tally) async {
        let name = "streamed-upload"
        let size = Int.random(in: 4096...1024 * 1024, using: &random)
        let known = Bool.random(using: &random)
        let base = Bool.random(using: &random) ? configuration.http : configuration.h2
        let body = TransportRequest.Body.stream(length: known ? size : nil) { writer in
            let chunk = [UInt8](repeating: 0x61, count: 16 * 1024)
            var left = size
            while left > 0 {
                let count = min(left, chunk.count)
                try await writer.write(chunk[0..<count])
                left -= count
            }
        }
        await upload(body, to: base, &random, name, tally)
    }

    /// The 256 KiB file, whole or a range of it, over HTTP/1.1 or HTTP/2.
    private func fileUpload(_ random: inout SplitMix, _ tally: Tally) async {
        let name = "file-upload"
        let base = Bool.random(using: &random) ? configuration.http : configuration.h2
        let lower = Int.random(in: 0..<128 * 1024, using: &random)
        let range: Range<Int>? = Bool.random(using: &random) ? lower..<(lower + 64 * 1024) : nil
        do {
            let body = try TransportRequest.Body.file(configuration.uploadFile, range: range)
            await upload(body, to: base, &random, name, tally)
        } catch {
            tally.unexpected(name, "\(error)")
        }
    }

    /// Three uploads in four go to a location that reads the whole body before answering; one in four to
    /// one that answers at once (nginx then resets the HTTP/2 stream, or discards the HTTP/1.1 body).
    private func upload(
        _ body: TransportRequest.Body, to base: String, _ random: inout SplitMix, _ name: String, _ tally: Tally
    ) async {
        let answersEarly = Int.random(in: 0..<4, using: &random) == 0
        let request = TransportRequest(url: base + (answersEarly ? "/upload" : "/upload-read"), method: .post, body: body)
        do {
            let response = try await session.execute(request)
            if response.status.code != 200 || response.body != Data("ok".utf8) {
                let text = String(decoding: response.body.prefix(40), as: UTF8.self)
                tally.unexpected(name, "status \(response.status.code), body \(response.body.count) bytes: \(text)")
            }
        } catch where answersEarly && base == configuration.h2 && error.code == .streamReset {
            // nginx resets the stream right after its answer; a libcurl that reads both at once loses the
            // answer (CurlQuirks.earlyAnswerStallsHTTP2Upload, before 8.1.1; none on 8.14): counted as an error.
            tally.expected(error)
        } catch {
            tally.unexpected(name, "\(error)")
        }
    }

    // MARK: Event streams

    /// The stream file holds four events and `retry: 1`, then ends: reading ten events takes three
    /// connections (two reconnections, each sending the last id).
    private func events(_ tally: Tally) async {
        let name = "events"
        let stream = session.events(
            for: TransportRequest(url: configuration.http + "/sse/full/soak.sse"),
            policy: EventStreamPolicy(reconnectionTime: .milliseconds(1), maxConsecutiveFailures: 3))
        var seen: [String] = []
        do {
            for try await event in stream {
                seen.append(event.data)
                if seen.count == 10 { break }
            }
        } catch {
            tally.unexpected(name, "\(error) after \(seen.count) events")
        }
        stream.close()
        let expected = (0..<10).map { "event \($0 % 4 + 1)" }
        if seen != expected, seen.count == 10 { tally.unexpected(name, "events \(seen)") }
    }

    // MARK: Cancellation

    /// A request cancelled 0 to 30 ms after it starts: a slow response (nginx answers after 1 s) or a
    /// download being read, so the cancellation lands before the connection, while waiting for the head,
    /// or while the body flows.
    private func cancelled(_ random: inout SplitMix, _ tally: Tally) async {
        let name = "cancelled"
        let delay = Int.random(in: 0...30_000, using: &random)
        let slow = Bool.random(using: &random)
        let session = self.session
        let http = configuration.http
        let h2 = configuration.h2
        let useH2 = Bool.random(using: &random)
        let task = Task {
            if slow {
                _ = try await session.execute(TransportRequest(url: http + "/slow"))
            } else {
                try await session.perform(TransportRequest(url: (useH2 ? h2 : http) + "/big")) { _, body in
                    for try await _ in body {}
                }
            }
        }
        try? await Task.sleep(for: .microseconds(delay))
        task.cancel()
        switch await task.result {
        case .success:
            tally.unexpected(name, "finished before its cancellation")
        case .failure(let error as TransportError) where error.code == .cancelled:
            tally.expected(error)
        case .failure(let error as CancellationError):
            tally.expected(error)
        case .failure(let error):
            tally.unexpected(name, "\(error)")
        }
    }

    // MARK: Hostile server

    /// Modes of Benchmarks/soak.py's hostile server: 0 closes without answering, 1 closes inside the
    /// head, 2 resets the connection, 3 sends 10 of 100 promised bytes and closes, 4 answers properly and
    /// closes the connection a moment later, 5 sends a broken chunk size.
    private func hostile(_ random: inout SplitMix, _ tally: Tally) async {
        let name = "hostile"
        let mode = Int.random(in: 0...5, using: &random)
        do {
            let response = try await session.execute(TransportRequest(url: configuration.hostile + "/?mode=\(mode)"))
            if mode != 4 || response.status.code != 200 || response.body != Data("ok".utf8) {
                tally.unexpected(name, "mode \(mode) accepted: status \(response.status.code)")
            }
        } catch {
            if mode == 4 { tally.unexpected(name, "mode 4 failed: \(error)") } else { tally.expected(error) }
        }
    }
}
