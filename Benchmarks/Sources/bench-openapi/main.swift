// Curlew benchmarks — the client swift-openapi-generator made from Tests/OpenAPIFixture/openapi.yaml
// (issue 31) on two transports, through the same generated `Client`: Curlew's `CurlewTransport` on a
// `CurlSession` configured as bench-curlew configures its sessions (`curlew`), and
// swift-openapi-async-http-client's `AsyncHTTPClientTransport` on an `HTTPClient` configured as bench-peers
// configures async-http-client (`ahc`).
//
// usage: bench-openapi curlew|ahc openapi-get-1|openapi-get-64|openapi-download-256m BASE_URL [SCALE]
// nginx (run.py) answers `GET /greet` with `{"message":"Hello, Stranger!"}` (application/json) and
// `GET /download` with its 256 MiB file (application/octet-stream), whatever the query.

import AsyncHTTPClient
import BenchCore
import CurlewEngine
import CurlewOpenAPI
import Foundation
import Glibc
import OpenAPIAsyncHTTPClient
import OpenAPIFixture
import OpenAPIRuntime
import Synchronization

/// The engine bench-curlew's `makeSession` makes for the same counts: responses up to 512 MiB, a handle and
/// idle-connection pool as large as the concurrency, one connection per request in flight above the
/// default per-host limit (64), Curlew's default pool otherwise.
func curlewTransport(_ workload: OpenAPIWorkload) throws -> (CurlewTransport, CurlSession) {
    var configuration = SessionConfiguration()
    configuration.maxResponseBodySize = 512 * 1024 * 1024
    configuration.maxPooledHandles = max(256, workload.concurrency)
    configuration.maxIdleConnections = max(1024, workload.concurrency)
    if workload.concurrency > configuration.maxConnectionsPerHost {
        configuration.maxConnectionsPerHost = 0
        configuration.maxConnectionsTotal = 0
    }
    // For trying buffer sizes, as in bench-curlew; the suite uses the defaults.
    if let buffer = getenv("CURLEW_BENCH_BUFFER").flatMap({ Int(String(cString: $0)) }) {
        configuration.receiveBufferSize = buffer
    }
    if let size = getenv("CURLEW_BENCH_STREAM_BUFFER").flatMap({ Int(String(cString: $0)) }) {
        configuration.streamBufferSize = size
    }
    let session = try CurlSession(configuration: configuration)
    return (CurlewTransport(session), session)
}

/// async-http-client as bench-peers configures it: one connection per request in flight, decompression on,
/// the shared event loop group; the transport's timeout as bench-peers' `execute` timeout.
func ahcTransport(_ workload: OpenAPIWorkload) -> AsyncHTTPClientTransport {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: workload.concurrency)
    configuration.decompression = .enabled(limit: .none)
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    return AsyncHTTPClientTransport(configuration: .init(client: client, timeout: .seconds(120)))
}

/// One call of the workload's operation through `client`; returns the body bytes read.
func operation(_ workload: OpenAPIWorkload, _ client: Client) -> @Sendable () async throws -> Int {
    switch workload.operation {
    case .greeting:
        return {
            let message = try await client.getGreeting(query: .init(name: "Stranger")).ok.body.json.message
            guard message == OpenAPIWorkload.greeting else { throw BenchFailure("message \(message)") }
            // The JSON decoded to the expected message: nginx's fixed answer, whose length is the figure.
            return OpenAPIWorkload.greetingBody.utf8.count
        }
    case .download(let size):
        return {
            let body = try await client.download(query: .init(size: size)).ok.body.binary
            var count = 0
            var pieces = 0
            for try await chunk in body {
                count += chunk.count
                pieces += 1
            }
            chunks.add(pieces)
            return count
        }
    }
}

/// The chunks the downloads' bodies came in (how finely each transport hands a body out).
let chunks = Counter()

final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func add(_ amount: Int) { count.add(amount, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Chunks per response, after a download workload.
func chunkFigures(_ workload: OpenAPIWorkload) -> [(String, String)] {
    guard case .download = workload.operation else { return [] }
    return [("chunks_per_request", "\(Double(chunks.value) / Double(max(1, workload.requests)))")]
}

/// The engine's loop-thread CPU per request and its peak connections, as bench-curlew reports them.
func loopFigures(_ session: CurlSession) -> @Sendable (Int) -> [(String, String)] {
    let before = session.statistics.loopCPUTime
    return { requests in
        let used = (session.statistics.loopCPUTime - before).components
        let micros = Double(used.seconds) * 1e6 + Double(used.attoseconds) / 1e12
        return [
            ("loop_cpu_us_per_request", "\(micros / Double(max(1, requests)))"),
            ("peak_open_connections", "\(session.statistics.peakOpenConnections)"),
        ]
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, ["curlew", "ahc"].contains(arguments[1]),
    let workload = OpenAPIWorkload.named(arguments[2], scale: arguments.count > 4 ? Double(arguments[4]) ?? 1 : 1),
    let serverURL = URL(string: arguments[3])
else {
    FileHandle.standardError.write(Data(
        "usage: \(arguments[0]) curlew|ahc openapi-get-1|openapi-get-64|openapi-download-256m BASE_URL [SCALE]\n".utf8))
    exit(2)
}
raiseFileLimit()
let ok: Bool
do {
    if arguments[1] == "curlew" {
        let (transport, session) = try curlewTransport(workload)
        let client = Client(serverURL: serverURL, transport: transport)
        let loop = loopFigures(session)
        ok = await runWorkload(
            client: "curlew", workload: workload.base,
            benchClient: BenchClient(operation(workload, client), extraFigures: { requests in loop(requests) + chunkFigures(workload) }))
    } else {
        let client = Client(serverURL: serverURL, transport: ahcTransport(workload))
        ok = await runWorkload(
            client: "ahc", workload: workload.base,
            benchClient: BenchClient(operation(workload, client), extraFigures: { _ in chunkFigures(workload) }))
    }
} catch {
    FileHandle.standardError.write(Data("setup failed: \(error)\n".utf8))
    exit(1)
}
exit(ok ? 0 : 1)
