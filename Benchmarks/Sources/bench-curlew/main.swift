// Curlew benchmarks — Curlew's clients: the provider (`curlew`), the provider with a retry and an
// authentication middleware installed (`curlew-chain`), and the bare engine (`curlew-engine`).

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

/// A body of `count` bytes produced while the request runs, one 64 KiB array written again and again
/// (kept without copying until libcurl takes it).
func producedBody(_ count: Int, lengthKnown: Bool) -> RequestBody {
    let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
    return .stream(length: lengthKnown ? count : nil, replayable: true) { writer in
        var left = count
        while left > 0 {
            let take = min(left, chunk.count)
            try await writer.write(take == chunk.count ? chunk[...] : chunk[..<take])
            left -= take
        }
    }
}

/// Reads a streamed body to its end, dropping each chunk; returns the bytes seen.
func drain(_ body: ResponseBody) async throws -> Int {
    var count = 0
    for try await chunk in body { count += chunk.count }
    return count
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
    if let size = getenv("CURLEW_BENCH_STREAM_BUFFER").flatMap({ Int(String(cString: $0)) }) {
        configuration.streamBufferSize = size  // likewise, for streamed bodies
    }
    return try CurlSession(configuration: configuration)
}

/// A bearer token that never needs refreshing: what the authentication middleware costs on every
/// request when nothing goes wrong.
struct BenchToken: AuthenticationCredential {
    let value: String
}

struct BenchAuthenticator: Authenticator {
    func apply(_ credential: BenchToken, to request: inout TransportRequest) {
        request.headerFields[.authorization] = "Bearer \(credential.value)"
    }

    func refresh(_ credential: BenchToken?, context: MiddlewareContext) async throws -> BenchToken {
        BenchToken(value: "bench-token")
    }
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
    "curlew-chain": { workload, base in
        let session = try makeSession(workload)
        let provider = Provider<BenchTarget>(
            session: session,
            middleware: [
                RetryMiddleware(),
                AuthenticationMiddleware(BenchAuthenticator(), credential: BenchToken(value: "bench-token")),
            ])
        guard let url = URL(string: base) else { throw BenchFailure("bad base URL") }
        let target = BenchTarget(
            baseURL: url, path: workload.path, method: HTTPMethod(workload.method) ?? .get, body: workload.body,
            closesConnection: workload.newConnections)
        return BenchClient({
            let response = try await provider.request(target)
            guard response.statusCode == 200 else { throw BenchFailure("status \(response.statusCode)") }
            return response.data.count
        }, extraFigures: loopFigures(session))
    },
    "curlew": { workload, base in
        let session = try makeSession(workload)
        let provider = Provider<BenchTarget>(session: session)
        guard let url = URL(string: base) else { throw BenchFailure("bad base URL") }
        let target = BenchTarget(
            baseURL: url, path: workload.path, method: HTTPMethod(workload.method) ?? .get, body: workload.body,
            closesConnection: workload.newConnections)
        if workload.streamsResponse {
            return BenchClient({
                try await provider.stream(target) { response, body in
                    guard response.statusCode == 200 else { throw BenchFailure("status \(response.statusCode)") }
                    return try await drain(body)
                }
            }, extraFigures: loopFigures(session))
        }
        if let upload = workload.uploadBytes {
            // Through the engine's request type: a target's tasks carry no produced bodies yet.
            var request = TransportRequest(url: base + workload.path, method: .post, body: producedBody(upload, lengthKnown: workload.uploadLengthKnown))
            request.headerFields[.contentType] = "application/octet-stream"
            let uploadRequest = request
            return BenchClient({
                let response = try await session.execute(uploadRequest)
                guard response.status.code == 200 else { throw BenchFailure("status \(response.status.code)") }
                return response.body.count
            }, extraFigures: loopFigures(session))
        }
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
        let body = workload.uploadBytes.map { producedBody($0, lengthKnown: workload.uploadLengthKnown) } ?? workload.body.map { .bytes($0) }
        if workload.uploadBytes != nil { fields[.contentType] = "application/octet-stream" }
        let request = TransportRequest(
            url: base + workload.path, method: HTTPRequest.Method(workload.method) ?? .get, headerFields: fields, body: body)
        let decode = workload.decode
        if workload.streamsResponse {
            return BenchClient({
                try await session.perform(request) { head, body in
                    guard head.status.code == 200 else { throw BenchFailure("status \(head.status.code)") }
                    return try await drain(body)
                }
            }, extraFigures: loopFigures(session))
        }
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
