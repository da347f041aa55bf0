// Curlew benchmarks — the workloads every client runs, identically.

import Glibc

/// One benchmark workload: what to request, how many at once, and what a correct answer looks like.
public struct Workload: Sendable {
    public private(set) var name: String
    public let path: String
    public let method: String
    public let concurrency: Int
    public let requests: Int
    /// Exact body length every response must have.
    public private(set) var expectedBytes: Int
    /// Request body (POST workloads).
    public let body: [UInt8]?
    /// Decode the body into `[BenchUser]` (the JSON workloads' "decoded" variant).
    public let decode: Bool
    /// Most connections to the server; nil: one per request in flight (the client's pool explicitly
    /// unlimited). Curlew runs a limited workload on its default pool, whose per-host limit it equals.
    public var connections: Int? = nil
    /// Over HTTPS, verifying the server against the CA file in `BENCH_CA_FILE`.
    public var tls = false
    /// A new connection for every request (`Connection: close`): what new TLS connections cost.
    public var newConnections = false
    /// TLS session resumption; off for the `-noresume` workload.
    public var resumption = true
    /// HTTP/2 (ALPN h2, multiplexed).
    public var http2 = false
    /// The response is read as it arrives and dropped chunk by chunk, never collected.
    public var streamsResponse = false
    /// A request body of this many bytes, produced while the request runs (64 KiB at a time).
    public var uploadBytes: Int? = nil
    /// Whether the produced body's length is declared (sent as `Content-Length`); else chunked (HTTP/1.1).
    public var uploadLengthKnown = true
    /// Against the streaming test server (`stream_server.py` over TLS), not nginx.
    public var streamServer = false
    /// The body is downloaded to a file in `BENCH_FILE_DIR` (`CurlSession.download`), checked and deleted.
    public var downloadsToFile = false
    /// …with the file and its folder synced before and after the move (`DownloadOptions.syncsBeforeMove`).
    public var syncsFile = false
    /// …observed through `downloadWithProgress`, every update read.
    public var observesProgress = false
    /// The request body is this file (`TransportRequest.Body.file`); its length is `uploadBytes`.
    public var uploadFile: String? = nil
    /// The request body is sent gzipped at this level (`TransferOptions.requestCompression`); the
    /// figures count the bytes before compression.
    public var gzipLevel: Int? = nil
    /// Through the provider's file tasks (issue 16): the download through a target's
    /// `.downloadDestination`, the upload as one `.uploadMultipart` file part of `multipartFile`.
    public var throughProvider = false
    /// The file sent as the multipart upload's one file part (`BENCH_MULTIPART_FILE`); its length is
    /// `uploadBytes` (the figures count the file's bytes, not the few hundred of the part's framing).
    public var multipartFile: String? = nil

    /// The suite's workloads; `scale` shrinks request counts (smoke runs use a tiny scale).
    public static func all(scale: Double) -> [Workload] {
        func count(_ n: Int) -> Int { max(1, Int(Double(n) * scale)) }
        let post = [UInt8](String(repeating: "{\"k\":\"0123456789abcdef\"},", count: 170).utf8.prefix(4096))
        return [
            Workload(name: "small-get-1", path: "/small", method: "GET", concurrency: 1, requests: count(20_000), expectedBytes: BenchPayloads.smallLength, body: nil, decode: false),
            Workload(name: "small-get-64", path: "/small", method: "GET", concurrency: 64, requests: count(100_000), expectedBytes: BenchPayloads.smallLength, body: nil, decode: false),
            Workload(name: "json-16", path: "/users.json", method: "GET", concurrency: 16, requests: count(40_000), expectedBytes: BenchPayloads.usersLength, body: nil, decode: false),
            Workload(name: "json-16-decoded", path: "/users.json", method: "GET", concurrency: 16, requests: count(10_000), expectedBytes: BenchPayloads.usersLength, body: nil, decode: true),
            Workload(name: "post-4k", path: "/post", method: "POST", concurrency: 16, requests: count(40_000), expectedBytes: 3, body: post, decode: false),
            Workload(name: "download-256m", path: "/big", method: "GET", concurrency: 1, requests: max(1, Int(4 * scale)), expectedBytes: BenchPayloads.bigLength, body: nil, decode: false),
            Workload(name: "concurrent-10k", path: "/slow", method: "GET", concurrency: max(2, Int(10_000 * min(scale * 10, 1))), requests: max(2, Int(10_000 * min(scale * 10, 1))), expectedBytes: 12, body: nil, decode: false),
            // 10,000 at once over 64 connections: requests wait in the client's own queue.
            Workload(name: "queued-10k", path: "/fast", method: "GET", concurrency: max(2, Int(10_000 * min(scale * 10, 1))), requests: max(2, Int(10_000 * min(scale * 10, 1))), expectedBytes: 12, body: nil, decode: false, connections: 64),
            Workload(name: "https-get-1", path: "/small", method: "GET", concurrency: 1, requests: count(20_000), expectedBytes: BenchPayloads.smallLength, body: nil, decode: false, tls: true),
            Workload(name: "https-get-64", path: "/small", method: "GET", concurrency: 64, requests: count(100_000), expectedBytes: BenchPayloads.smallLength, body: nil, decode: false, tls: true),
            Workload(name: "tls-new-conn", path: "/small", method: "GET", concurrency: 1, requests: count(4_000), expectedBytes: BenchPayloads.smallLength, body: nil, decode: false, tls: true, newConnections: true),
            Workload(name: "tls-new-conn-noresume", path: "/small", method: "GET", concurrency: 1, requests: count(4_000), expectedBytes: BenchPayloads.smallLength, body: nil, decode: false, tls: true, newConnections: true, resumption: false),
            // HTTP/2 over TLS (the server offers h2 through ALPN): every client multiplexes.
            Workload(name: "h2-get-64", path: "/small", method: "GET", concurrency: 64, requests: count(100_000), expectedBytes: BenchPayloads.smallLength, body: nil, decode: false, tls: true, http2: true),
            Workload(name: "h2-500", path: "/small", method: "GET", concurrency: 500, requests: count(50_000), expectedBytes: BenchPayloads.smallLength, body: nil, decode: false, tls: true, http2: true),
            // The 256 MiB file read as a stream and dropped: memory stays flat.
            Workload(name: "stream-download-256m", path: "/big", method: "GET", concurrency: 1, requests: max(1, Int(4 * scale)), expectedBytes: BenchPayloads.bigLength, body: nil, decode: false, streamsResponse: true),
            // 256 MiB produced while it is sent; nginx discards it and answers `ok`.
            Workload(name: "stream-upload-256m", path: "/upload", method: "POST", concurrency: 1, requests: max(1, Int(4 * scale)), expectedBytes: 2, body: nil, decode: false, uploadBytes: BenchPayloads.bigLength),
            // HTTP/2 uploads to a server that reads 1 MiB/s (about 20 s each): the client's CPU while the
            // flow-control window keeps it waiting.
            Workload(name: "h2-upload-slow-known", path: "/slow-read?rate=1048576", method: "POST", concurrency: 1, requests: 1, expectedBytes: BenchPayloads.slowReadReplyLength(slowUpload(scale)), body: nil, decode: false, tls: true, http2: true, uploadBytes: slowUpload(scale), streamServer: true),
            Workload(name: "h2-upload-slow-unknown", path: "/slow-read?rate=1048576", method: "POST", concurrency: 1, requests: 1, expectedBytes: BenchPayloads.slowReadReplyLength(slowUpload(scale)), body: nil, decode: false, tls: true, http2: true, uploadBytes: slowUpload(scale), uploadLengthKnown: false, streamServer: true),
            // Files (issue 15): the 256 MiB body written to a file and moved into place (without, then with
            // fsync; then observed through progress updates); a 256 MiB file uploaded; a 64 MiB JSON file
            // uploaded gzipped at level 1 (chunked: its compressed length is not known in advance).
            Workload(name: "download-file-256m", path: "/big", method: "GET", concurrency: 1, requests: max(1, Int(4 * scale)), expectedBytes: BenchPayloads.bigLength, body: nil, decode: false, downloadsToFile: true),
            Workload(name: "download-file-256m-fsync", path: "/big", method: "GET", concurrency: 1, requests: max(1, Int(4 * scale)), expectedBytes: BenchPayloads.bigLength, body: nil, decode: false, downloadsToFile: true, syncsFile: true),
            Workload(name: "download-file-256m-progress", path: "/big", method: "GET", concurrency: 1, requests: max(1, Int(4 * scale)), expectedBytes: BenchPayloads.bigLength, body: nil, decode: false, downloadsToFile: true, observesProgress: true),
            Workload(name: "upload-file-256m", path: "/upload", method: "POST", concurrency: 1, requests: max(1, Int(4 * scale)), expectedBytes: 2, body: nil, decode: false, uploadBytes: BenchPayloads.uploadFile.length, uploadFile: BenchPayloads.uploadFile.path),
            Workload(name: "gzip-json-64m", path: "/upload", method: "POST", concurrency: 1, requests: max(1, Int(4 * scale)), expectedBytes: 2, body: nil, decode: false, uploadBytes: BenchPayloads.jsonFile.length, uploadLengthKnown: false, uploadFile: BenchPayloads.jsonFile.path, gzipLevel: 1),
            // The provider's file tasks (issue 16): a 1 GiB sparse file uploaded as one multipart/form-data
            // file part (`.uploadMultipart`), one request; the 256 MiB body downloaded through a target's
            // `.downloadDestination` closure (as download-file-256m, through the provider).
            Workload(name: "multipart-upload-1g", path: "/upload", method: "POST", concurrency: 1, requests: 1, expectedBytes: 2, body: nil, decode: false, uploadBytes: BenchPayloads.multipartFile.length, throughProvider: true, multipartFile: BenchPayloads.multipartFile.path),
            Workload(name: "download-destination-256m", path: "/big", method: "GET", concurrency: 1, requests: max(1, Int(4 * scale)), expectedBytes: BenchPayloads.bigLength, body: nil, decode: false, downloadsToFile: true, throughProvider: true),
        ]
    }

    /// 20 MiB for the full run (20 s at 1 MiB/s), 1 MiB for smoke runs.
    static func slowUpload(_ scale: Double) -> Int {
        max(1 << 20, Int(Double(20 << 20) * min(1, scale * 5)) / (1 << 20) * (1 << 20))
    }

    public static func named(_ name: String, scale: Double) -> Workload? {
        all(scale: scale).first { $0.name == name }
    }

    /// This workload's counts and settings under another name, for a client that serves it through another
    /// API (a generated OpenAPI client's operation), whose responses carry `expectedBytes`.
    public func mirrored(as name: String, expectedBytes: Int) -> Workload {
        var copy = self
        copy.name = name
        copy.expectedBytes = expectedBytes
        return copy
    }
}

/// The model the decoded JSON workload decodes into.
public struct BenchUser: Decodable, Sendable {
    public let id: Int
    public let login: String
    public let name: String
    public let email: String
    public let admin: Bool
    public let score: Double
    public let tags: [String]
}

/// The server's payload sizes, which the runner writes and the clients check.
public enum BenchPayloads {
    public static let smallLength = 106
    public static let usersLength = getenv("BENCH_USERS_LENGTH").flatMap { Int(String(cString: $0)) } ?? 0
    public static let bigLength = 256 * 1024 * 1024
    /// The length of `/slow-read`'s answer, `{"received": N}`.
    public static func slowReadReplyLength(_ received: Int) -> Int {
        "{\"received\": \(received)}".utf8.count
    }
    /// The CA certificate every client trusts for the HTTPS workloads.
    public static let caFile = getenv("BENCH_CA_FILE").map { String(cString: $0) } ?? ""
    /// The folder the file workloads download into (on the run's temp folder's file system).
    public static let fileFolder = getenv("BENCH_FILE_DIR").map { String(cString: $0) }
    /// The file the file upload sends, and the JSON document the compressed upload sends, with their
    /// lengths (nil and 0 when the runner made none).
    public static let uploadFile = file(named: "BENCH_UPLOAD_FILE")
    public static let jsonFile = file(named: "BENCH_JSON_FILE")
    /// The 1 GiB sparse file the multipart upload sends (issue 16).
    public static let multipartFile = file(named: "BENCH_MULTIPART_FILE")

    static func file(named variable: String) -> (path: String?, length: Int) {
        guard let path = getenv(variable).map({ String(cString: $0) }) else { return (nil, 0) }
        var info = stat()
        return (path, stat(path, &info) == 0 ? Int(info.st_size) : 0)
    }
}
