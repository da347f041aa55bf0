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
    var headers: [String: String]? { body == nil ? nil : ["Content-Type": "application/json"] }
}

func makeSession(_ workload: Workload) throws -> CurlSession {
    var configuration = SessionConfiguration()
    configuration.maxResponseBodySize = 512 * 1024 * 1024
    configuration.maxPooledHandles = max(256, workload.concurrency)
    configuration.maxIdleConnections = max(1024, workload.concurrency)
    if let buffer = getenv("CURLEW_BENCH_BUFFER").flatMap({ Int(String(cString: $0)) }) {
        configuration.receiveBufferSize = buffer  // for trying buffer sizes; the suite uses the default
    }
    return try CurlSession(configuration: configuration)
}

benchMain(clients: [
    "curlew": { workload, base in
        let session = try makeSession(workload)
        let provider = Provider<BenchTarget>(session: session)
        guard let url = URL(string: base) else { throw BenchFailure("bad base URL") }
        let target = BenchTarget(
            baseURL: url, path: workload.path, method: HTTPMethod(workload.method) ?? .get, body: workload.body)
        if workload.decode {
            return {
                let result = try await provider.request(target, as: [BenchUser].self)
                guard result.value?.count == 121 else { throw BenchFailure("status \(result.statusCode) or wrong users") }
                return result.response.data.count
            }
        }
        return {
            let response = try await provider.request(target)
            guard response.statusCode == 200 else { throw BenchFailure("status \(response.statusCode)") }
            return response.data.count
        }
    },
    "curlew-engine": { workload, base in
        let session = try makeSession(workload)
        let request = TransportRequest(
            url: base + workload.path, method: HTTPRequest.Method(workload.method) ?? .get,
            headerFields: workload.body == nil ? [:] : [.contentType: "application/json"],
            body: workload.body.map { .bytes($0) })
        let decode = workload.decode
        return {
            let response = try await session.execute(request)
            guard response.status.code == 200 else { throw BenchFailure("status \(response.status.code)") }
            if decode {
                let users = try JSONDecoder().decode([BenchUser].self, from: response.body)
                guard users.count == 121 else { throw BenchFailure("wrong users") }
            }
            return response.body.count
        }
    },
])
