// Curlew benchmarks — Curlew's clients: the provider (`curlew`), the provider with a retry and an
// authentication middleware installed (`curlew-chain`), the provider sending the header that chain adds
// from the target's headers (`curlew-header`), the provider recording metrics into a trivial
// backend (`curlew-metrics`), and the bare engine (`curlew-engine`).

import BenchCore
import Curlew
import FoundationEssentials
import Glibc
import Synchronization

struct BenchTarget: TargetType {
    let baseURL: URL
    let path: String
    let method: HTTPRequest.Method
    let body: [UInt8]?
    var task: RequestTask { body.map { .requestData(Data($0)) } ?? .requestPlain }
    let closesConnection: Bool
    /// An `Authorization` value the target itself sends (`curlew-header`), what `curlew-chain`'s
    /// authentication middleware adds: the chain's cost is the difference between the two.
    var authorization: String? = nil
    var headers: [String: String]? {
        var fields: [String: String] = [:]
        if body != nil { fields["Content-Type"] = "application/json" }
        if closesConnection { fields["Connection"] = "close" }
        if let authorization { fields["Authorization"] = authorization }
        return fields.isEmpty ? nil : fields
    }
}

extension BenchTarget {
    /// The workload's request as a target at `base`.
    init(_ workload: Workload, base: String) throws {
        guard let url = URL(string: base) else { throw BenchFailure("bad base URL") }
        self.init(
            baseURL: url, path: workload.path, method: HTTPRequest.Method(workload.method) ?? .get, body: workload.body,
            closesConnection: workload.newConnections)
    }
}

/// A body of `count` bytes produced while the request runs, one 64 KiB array written again and again
/// (kept without copying until libcurl takes it).
func producedBody(_ count: Int, lengthKnown: Bool) -> TransportRequest.Body {
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
func drain(_ body: ResponseBodyStream) async throws -> Int {
    var count = 0
    for try await chunk in body { count += chunk.count }
    return count
}

func makeSession(_ workload: Workload, metrics: Bool = false) throws -> CurlSession {
    var configuration = SessionConfiguration()
    if metrics { configuration.telemetry = Telemetry(metricsFactory: TrivialMetrics()) }
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
    if let size = getenv("CURLEW_BENCH_MAX_STREAM_BUFFER").flatMap({ Int(String(cString: $0)) }) {
        configuration.maxStreamBufferSize = size  // likewise, for the marks' cap
    }
    return try CurlSession(configuration: configuration)
}

/// The file workloads (issue 15), on the engine's APIs: downloads to a file (with progress or not) and
/// uploads from a file (gzipped or not). Nil for the other workloads.
func fileClient(_ workload: Workload, base: String, session: CurlSession) throws -> BenchClient? {
    let url = base + workload.path
    if workload.downloadsToFile {
        guard let folder = BenchPayloads.fileFolder else { throw BenchFailure("BENCH_FILE_DIR is not set") }
        let path = "\(folder)/download-curlew-\(getpid())"
        let destination = DownloadDestination(path: path)
        let options = DownloadOptions(syncsBeforeMove: workload.syncsFile)
        let request = TransportRequest(url: url)
        if workload.observesProgress {
            let updates = Counter()
            let loop = loopFigures(session)
            return BenchClient({
                var response: DownloadResponse?
                for try await update in session.downloadWithProgress(request, to: destination, options: options) {
                    updates.add()
                    if let last = update.response { response = last }
                }
                guard let response else { throw BenchFailure("the last progress update had no response") }
                return try checkedDownload(response, at: path)
            }, extraFigures: { requests in
                loop(requests) + [("progress_updates_per_request", "\(Double(updates.value) / Double(max(1, requests)))")]
            })
        }
        return BenchClient({
            try checkedDownload(try await session.download(request, to: destination, options: options), at: path)
        }, extraFigures: loopFigures(session))
    }
    if workload.uploadFile != nil || workload.gzipLevel != nil {
        guard let file = workload.uploadFile, workload.uploadBytes ?? 0 > 0 else {
            throw BenchFailure("no file to upload (BENCH_UPLOAD_FILE / BENCH_JSON_FILE)")
        }
        var request = TransportRequest(url: url, method: .post, body: try TransportRequest.Body.file(file))
        request.headerFields[.contentType] = workload.gzipLevel == nil ? "application/octet-stream" : "application/json"
        if let level = workload.gzipLevel {
            request.options = TransferOptions(requestCompression: .gzip(level: level))
        }
        return uploadClient(session, request)
    }
    return nil
}

/// A target carrying one of the provider's file tasks (issue 16).
struct FileTaskTarget: TargetType {
    let baseURL: URL
    let path: String
    let method: HTTPRequest.Method
    let task: RequestTask
    var headers: [String: String]? { nil }
}

/// The provider's file workloads (issue 16): a file uploaded as one multipart/form-data part
/// (`.uploadMultipart`), or a download through a target's `.downloadDestination` closure. Nil for the
/// other workloads.
func providerFileClient(_ workload: Workload, base: String, session: CurlSession) throws -> BenchClient? {
    guard workload.throughProvider else { return nil }
    guard let url = URL(string: base) else { throw BenchFailure("bad base URL") }
    let provider = Provider<FileTaskTarget>(session: session)
    if let file = workload.multipartFile {
        guard workload.uploadBytes ?? 0 > 0 else { throw BenchFailure("no file to upload (BENCH_MULTIPART_FILE)") }
        let form = MultipartFormData(parts: [
            MultipartFormBodyPart(provider: .file(URL(fileURLWithPath: file)), name: "file", mimeType: "application/octet-stream")
        ])
        let target = FileTaskTarget(baseURL: url, path: workload.path, method: .post, task: .uploadMultipart(form))
        return requestClient(provider, target, session)
    }
    guard workload.downloadsToFile, let folder = BenchPayloads.fileFolder else { throw BenchFailure("BENCH_FILE_DIR is not set") }
    let path = "\(folder)/download-curlew-\(getpid())"
    let destination = DownloadDestination { _, _ in (URL(fileURLWithPath: path), [.removePreviousFile]) }
    let target = FileTaskTarget(baseURL: url, path: workload.path, method: .get, task: .downloadDestination(destination))
    return BenchClient({
        let response = try await provider.request(target)
        defer { unlink(path) }
        guard response.statusCode == 200 else { throw BenchFailure("status \(response.statusCode)") }
        guard let file = response.fileURL, file.path(percentEncoded: false) == path else {
            throw BenchFailure("downloaded to \(response.fileURL?.path(percentEncoded: false) ?? "nowhere"), not \(path)")
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw BenchFailure("no file at \(path) after the download") }
        return Int(info.st_size)
    }, extraFigures: loopFigures(session))
}

/// Checks a download (status 200, the file where it was said to be, as long as said) and deletes it, so
/// every request writes a new file; returns its length.
func checkedDownload(_ response: DownloadResponse, at path: String) throws -> Int {
    defer { unlink(path) }
    guard response.head.status.code == 200 else { throw BenchFailure("status \(response.head.status.code)") }
    guard response.filePath == path else { throw BenchFailure("downloaded to \(response.filePath), not \(path)") }
    var info = stat()
    guard stat(path, &info) == 0 else { throw BenchFailure("no file at \(path) after the download") }
    guard Int(info.st_size) == response.fileSize else {
        throw BenchFailure("the file has \(info.st_size) bytes, the response says \(response.fileSize)")
    }
    return Int(info.st_size)
}

/// Counts progress updates across the run.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// A bearer token that never needs refreshing: what the authentication middleware costs on every
/// request when nothing goes wrong.
struct BenchToken: AuthenticationCredential {
    let value: String
}

struct BenchAuthenticator: CredentialAuthenticator {
    func apply(_ credential: BenchToken, to request: inout TransportRequest) {
        request.headerFields[.authorization] = "Bearer \(credential.value)"
    }

    func refresh(_ credential: BenchToken?, context: MiddlewareContext) async throws -> BenchToken {
        BenchToken(value: "bench-token")
    }
}

/// Requests `target` through `provider`, expecting 200.
func requestClient<Target: TargetType>(_ provider: Provider<Target>, _ target: Target, _ session: CurlSession) -> BenchClient {
    BenchClient({
        let response = try await provider.request(target)
        guard response.statusCode == 200 else { throw BenchFailure("status \(response.statusCode)") }
        return response.data.count
    }, extraFigures: loopFigures(session))
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
    // The provider with metrics recorded into the cheapest backend (one atomic add per record).
    "curlew-metrics": { workload, base in
        let session = try makeSession(workload, metrics: true)
        let provider = Provider<BenchTarget>(session: session)
        let target = try BenchTarget(workload, base: base)
        return requestClient(provider, target, session)
    },
    "curlew-chain": { workload, base in
        let session = try makeSession(workload)
        let provider = Provider<BenchTarget>(
            session: session,
            middleware: [
                RetryMiddleware(),
                AuthenticationMiddleware(BenchAuthenticator(), credential: BenchToken(value: "bench-token")),
            ])
        let target = try BenchTarget(workload, base: base)
        return requestClient(provider, target, session)
    },
    // The provider sending the header `curlew-chain` adds, from the target's headers: the baseline the
    // chain is measured against.
    "curlew-header": { workload, base in
        let session = try makeSession(workload)
        let provider = Provider<BenchTarget>(session: session)
        var target = try BenchTarget(workload, base: base)
        target.authorization = "Bearer bench-token"
        return requestClient(provider, target, session)
    },
    "curlew": { workload, base in
        let session = try makeSession(workload)
        // The provider's file tasks (issue 16).
        if let client = try providerFileClient(workload, base: base, session: session) { return client }
        // Issue 15's file workloads use the engine's APIs (run.py runs them on curlew-engine only).
        if let client = try fileClient(workload, base: base, session: session) { return client }
        let provider = Provider<BenchTarget>(session: session)
        let target = try BenchTarget(workload, base: base)
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
            return uploadClient(session, request)
        }
        if workload.decode {
            return BenchClient({
                let result = try await provider.request(target, as: [BenchUser].self)
                guard result.value?.count == 121 else { throw BenchFailure("status \(result.statusCode) or wrong users") }
                return result.response.data.count
            }, extraFigures: loopFigures(session))
        }
        return requestClient(provider, target, session)
    },
    "curlew-engine": { workload, base in
        let session = try makeSession(workload)
        if let client = try fileClient(workload, base: base, session: session) { return client }
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

/// A client sending `request` (an upload) and expecting a 200.
func uploadClient(_ session: CurlSession, _ request: TransportRequest) -> BenchClient {
    BenchClient({
        let response = try await session.execute(request)
        guard response.status.code == 200 else { throw BenchFailure("status \(response.status.code)") }
        return response.body.count
    }, extraFigures: loopFigures(session))
}
