// Curlew benchmarks — Curlew's clients: the provider (`curlew`) and the bare engine (`curlew-engine`).

import BenchCore
import Curlew
import FoundationEssentials
import Glibc

struct BenchTarget: TargetType {
    let baseURL: URL
    let path: String
    let method: HTTPMethod
    let body: [UInt8]?
    var task: RequestTask { body.map { .requestData(Data($0)) } ?? .requestPlain }
    let closesConnection: Bool
    var headers: [String: String]? {
        var fields: [String: String] = [:]
        if body != nil { fields["Content-Type"] = "application/json" }
        if closesConnection { fields["Connection"] = "close" }
        return fields.isEmpty ? nil : fields
    }
}

func makeSession(_ workload: Workload) throws -> CurlSession {
    var configuration = SessionConfiguration()
    configuration.maxResponseBodySize = 512 * 1024 * 1024
    configuration.maxPooledHandles = max(256, workload.concurrency)
    configuration.maxIdleConnections = max(1024, workload.concurrency)
    if workload.connections == nil, workload.concurrency > configuration.maxConnectionsPerHost {
        // One connection per request in flight: the pool explicitly unlimited.
        configuration.maxConnectionsPerHost = 0
        configuration.maxConnectionsTotal = 0
    }
    // Otherwise Curlew's default pool (64 per host, the limited workloads' connection count).
    if workload.tls {
        configuration.tls.trustRoots = .file(BenchPayloads.caFile)
        configuration.tls.sessionResumption = workload.resumption
    }
    if let buffer = getenv("CURLEW_BENCH_BUFFER").flatMap({ Int(String(cString: $0)) }) {
        configuration.receiveBufferSize = buffer  // for trying buffer sizes; the suite uses the default
    }
    return try CurlSession(configuration: configuration)
}

/// The engine's loop-thread CPU per request, reported beside the process figures.
func loopFigures(_ session: CurlSession) -> @Sendable (Int) -> [(String, String)] {
    let before = session.statistics.loopCPUTime
    return { requests in
        let used = session.statistics.loopCPUTime - before
        let micros = Double(used.components.seconds) * 1e6 + Double(used.components.attoseconds) / 1e12
        return [
            ("loop_cpu_us_per_request", "\(micros / Double(max(1, requests)))"),
            ("peak_open_connections", "\(session.statistics.peakOpenConnections)"),
        ]
    }
}

benchMain(clients: [
    "curlew": { workload, base in
        let session = try makeSession(workload)
        let provider = Provider<BenchTarget>(session: session)
        guard let url = URL(string: base) else { throw BenchFailure("bad base URL") }
        let target = BenchTarget(
            baseURL: url, path: workload.path, method: HTTPMethod(workload.method) ?? .get, body: workload.body,
            closesConnection: workload.newConnections)
        if workload.decode {
            return BenchClient({
                let result = try await provider.request(target, as: [BenchUser].self)
                guard result.value?.count == 121 else { throw BenchFailure("status \(result.statusCode) or wrong users") }
                return result.response.data.count
            }, extraFigures: loopFigures(session))
        }
        return BenchClient({
            let response = try await provider.request(target)
            guard response.statusCode == 200 else { throw BenchFailure("status \(response.statusCode)") }
            return response.data.count
        }, extraFigures: loopFigures(session))
    },
    "curlew-engine": { workload, base in
        let session = try makeSession(workload)
        var fields = HTTPFields()
        if workload.body != nil { fields[.contentType] = "application/json" }
        if workload.newConnections { fields[.connection] = "close" }
        let request = TransportRequest(
            url: base + workload.path, method: HTTPRequest.Method(workload.method) ?? .get, headerFields: fields,
            body: workload.body.map { .bytes($0) })
        let decode = workload.decode
        return BenchClient({
            let response = try await session.execute(request)
            guard response.status.code == 200 else { throw BenchFailure("status \(response.status.code)") }
            if decode {
                let users = try JSONDecoder().decode([BenchUser].self, from: response.body)
                guard users.count == 121 else { throw BenchFailure("wrong users") }
            }
            return response.body.count
        }, extraFigures: loopFigures(session))
    },
])
