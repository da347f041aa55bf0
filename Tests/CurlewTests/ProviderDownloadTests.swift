// Curlew — Moya's download and upload tasks through a Provider, against real servers on loopback
// (LocalHTTPServer, and stream_server.py's `/file` for redirects, validators, cuts and pacing): the file
// holds exactly what was served, the destination closure and its options decide where and how, every
// stage (plugins, middleware, stubs, validation, typed decoding, progress) treats the file as the body,
// and no failure, retry or cancellation leaves a stray file behind.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

// MARK: Helpers

/// A target whose every part a test sets.
private struct Transfer: TargetType {
    var base: String
    var path: String
    var method: HTTPRequest.Method = .get
    var task: RequestTask
    var headers: [String: String]? = nil
    var sampleData: Data = Data()
    var validationType: ValidationType = .none
    var downloadOptions: DownloadOptions = DownloadOptions()

    var baseURL: URL { URL(string: base) ?? URL(fileURLWithPath: "/") }

    init(_ base: String, _ path: String, method: HTTPRequest.Method = .get, task: RequestTask) {
        self.base = base
        self.path = path
        self.method = method
        self.task = task
    }

    init(_ server: LocalHTTPServer, _ path: String, method: HTTPRequest.Method = .get, task: RequestTask) {
        self.init(server.baseURL, path, method: method, task: task)
    }

    /// A target for stream_server.py: the query of `pathAndQuery` goes on the base URL, which keeps it
    /// after the joined path (a `?` in a target's path is escaped).
    init(_ server: StreamTestServer, _ pathAndQuery: String, method: HTTPRequest.Method = .get, task: RequestTask) {
        let parts = pathAndQuery.split(separator: "?", maxSplits: 1)
        let query = parts.count > 1 ? "?" + parts[1] : ""
        self.init("http://127.0.0.1:\(server.port)\(query)", parts.first.map(String.init) ?? "", method: method, task: task)
    }
}

/// A body the tests decode from downloaded JSON files.
private struct Item: Codable, Equatable, Sendable {
    let name: String
    let tags: [String]
    let count: Int
}

private let itemJSON = #"{"name":"curlew","tags":["a","b"],"count":3}"#
private let notFoundJSON = #"{"error_message":"Not Found"}"#

/// Runs `body` with a fresh directory (a file URL), removed afterwards.
private func withDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-provider-download-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return try await ensuring({ try await body(directory) }, cleanUp: { try? FileManager.default.removeItem(at: directory) })
}

/// The names in `directory`, sorted (hidden ones included); empty when it cannot be listed.
private func entries(_ directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
}

/// The bytes of a file; nil when it cannot be read.
private func bytes(_ url: URL) -> [UInt8]? {
    (try? FileContents.read(atPath: url.path)).map { [UInt8]($0) }
}

/// Whether a name is one of Curlew's temporary download files (`.<name>.<random>.download`).
private func isTemporaryDownload(_ name: String) -> Bool {
    name.hasPrefix(".") && name.hasSuffix(".download")
}

/// A destination closure that always answers `url` with `options`.
private func fixed(_ url: URL, _ options: DownloadDestination.Options = [.removePreviousFile]) -> DownloadDestination {
    DownloadDestination { _, _ in (url, options) }
}

/// The TransportError of a CurlewError.transport, recording an issue for anything else.
private func transportFailure(_ error: CurlewError?, sourceLocation: SourceLocation = #_sourceLocation) -> TransportError? {
    guard case .transport(let failure) = error else {
        Issue.record("expected CurlewError.transport, got \(String(describing: error))", sourceLocation: sourceLocation)
        return nil
    }
    return failure
}

/// What stream_server.py logged for `/file` requests under `key`.
private struct FileLogEntry: Decodable, Equatable {
    let range: String?
    let ifRange: String?
    let status: Int
    let sent: Int

    enum CodingKeys: String, CodingKey {
        case range, status, sent
        case ifRange = "if_range"
    }
}

private func fileLog(_ server: StreamTestServer, _ session: CurlSession, key: String) async throws -> [FileLogEntry] {
    let response = try await session.execute(TransportRequest(url: server.url("/log?key=\(key)")))
    return try JSONDecoder().decode([FileLogEntry].self, from: response.body)
}

/// Iterates a progress sequence to its end.
private func collect<Response: Sendable>(
    _ updates: ProgressUpdates<Response, CurlewError>
) async throws(CurlewError) -> [ProgressUpdate<Response>] {
    var received: [ProgressUpdate<Response>] = []
    for try await update in updates { received.append(update) }
    return received
}

/// Records the Range and If-Range fields of each request plugins are told is sent.
private final class SentFields: PluginType {
    private let seen = Locked<[(range: String?, ifRange: String?, acceptEncoding: String?)]>([])

    var all: [(range: String?, ifRange: String?, acceptEncoding: String?)] { seen.withLock { $0 } }

    func willSend(_ request: TransportRequest, target: any TargetType) async {
        let fields = request.headerFields
        seen.withLock { $0.append((fields[.range], fields[.ifRange], fields[.acceptEncoding])) }
    }
}

/// Sends the exchange again, up to `attempts` times, after any transport failure (even one in the body,
/// which RetryMiddleware never retries): a download's attempts that fail keep partial files.
/// Retries a download once after a transport failure, then gives up with an error of its own (a failed
/// token refresh, say): an error that cannot carry resume data.
private struct RetryOnceThenFailOwnWay: TransportMiddleware {
    struct GaveUp: Error {}

    func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        do {
            return try await next(request, context, handler: handler)
        } catch .transport {
            var context = context
            context.attempt += 1
            _ = try? await next(request, context, handler: handler)
            throw .underlying(GaveUp(), nil)
        }
    }
}

private struct RetryAnyTransportFailure: TransportMiddleware {
    let attempts: Int

    func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext, handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        var context = context
        while true {
            do {
                return try await next(request, context, handler: handler)
            } catch .transport(let failure) where !failure.isCancellation && context.attempt < attempts {
                context.attempt += 1
            }
        }
    }
}

/// The server's replies by request path, for the hostile Content-Disposition values.
private struct Hostile: Sendable, CustomTestStringConvertible {
    let why: String
    /// The Content-Disposition value sent; nil: none.
    let disposition: String?
    /// The request path (its last segment is the URL's name).
    let path: String
    let expected: String

    var testDescription: String { why }
}

private let hostileDispositions: [Hostile] = [
    Hostile(why: "relative traversal", disposition: #"attachment; filename="../../escape.txt""#, path: "/dl/fallback.bin", expected: "__._escape.txt"),
    Hostile(
        why: "traversal in filename*", disposition: "attachment; filename*=UTF-8''..%2F..%2Fescape.txt", path: "/dl/fallback.bin",
        expected: "__._escape.txt"),
    Hostile(why: "absolute path", disposition: #"attachment; filename="/etc/passwd""#, path: "/dl/fallback.bin", expected: "_etc_passwd"),
    Hostile(
        why: "backslashes", disposition: #"attachment; filename="..\\..\\win.ini""#, path: "/dl/fallback.bin", expected: "__._win.ini"),
    Hostile(why: "two dots", disposition: #"attachment; filename="..""#, path: "/dl/fallback.bin", expected: "fallback.bin"),
    Hostile(
        why: "NUL, CR, LF", disposition: "attachment; filename*=UTF-8''evil%00%0D%0Aname.txt", path: "/dl/fallback.bin",
        expected: "evilname.txt"),
    Hostile(why: "dotfile", disposition: #"attachment; filename=".bashrc""#, path: "/dl/fallback.bin", expected: "_bashrc"),
    Hostile(
        why: "URL syntax in the name", disposition: #"attachment; filename="what?#100%.txt""#, path: "/dl/fallback.bin",
        expected: "what?#100%.txt"),
    Hostile(why: "raw UTF-8", disposition: #"attachment; filename="naïve.txt""#, path: "/dl/fallback.bin", expected: "naïve.txt"),
    Hostile(why: "encoded traversal in the URL", disposition: nil, path: "/dl/%2E%2E%2F%2E%2E%2Fup.txt", expected: "__._up.txt"),
    Hostile(why: "no name anywhere", disposition: nil, path: "/", expected: "download"),
    Hostile(
        why: "a dot carrying a combining mark", disposition: "attachment; filename*=UTF-8''.%CC%81bashrc", path: "/dl/fallback.bin",
        expected: "_\u{301}bashrc"),
    Hostile(
        why: "a first character longer than 255 bytes",
        disposition: "attachment; filename*=UTF-8''e" + String(repeating: "%CC%81", count: 200) + ".txt", path: "/dl/fallback.bin",
        expected: "fallback.bin"),
]

@Suite struct ProviderDownloadTests {
    // MARK: The file and the destination closure

    /// The closure is called once, with the final head after a redirect and a temporary URL in the
    /// temporary directory naming no file; the file it names holds exactly the served bytes.
    @Test func theFileHoldsTheServedBytesWhereTheClosureSaid() async throws {
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let calls = Locked<[(temporary: URL, existed: Bool, status: Int, etag: String?, length: String?, url: String, redirects: Int)]>([])
                let destination = DownloadDestination { temporaryURL, response in
                    let existed = FileManager.default.fileExists(atPath: temporaryURL.path)
                    calls.withLock {
                        $0.append(
                            (temporaryURL, existed, response.status.code, response.headerFields[.eTag],
                             response.headerFields[.contentLength], response.effectiveURL, response.redirects.count))
                    }
                    return (directory.appendingPathComponent("out.bin"), [])
                }
                let target = Transfer(
                    server, "/redirect", task: .downloadParameters(
                        parameters: ["status": 302, "to": "/file?n=300000&etag=abc"], encoding: URLEncoding.queryString,
                        destination: destination))
                let response = try await Provider<Transfer>(session: session).request(target)

                let call = try #require(calls.withLock { $0.count == 1 ? $0.first : nil })
                #expect(call.status == 200)
                #expect(call.etag == "\"abc\"")
                #expect(call.length == "300000")
                #expect(call.url == server.url("/file?n=300000&etag=abc"))
                #expect(call.redirects == 1)
                #expect(call.temporary.isFileURL)
                #expect(!call.existed)
                #expect(!FileManager.default.fileExists(atPath: call.temporary.path))
                #expect(call.temporary.lastPathComponent.hasSuffix(".download"))
                let temporaryDirectory = FileManager.default.temporaryDirectory.standardizedFileURL.path
                #expect(call.temporary.deletingLastPathComponent().standardizedFileURL.path == temporaryDirectory)

                #expect(response.statusCode == 200)
                #expect(response.fileURL == directory.appendingPathComponent("out.bin"))
                #expect(response.data.isEmpty)
                #expect(response.download?.fileSize == 300_000)
                #expect(response.download?.resumedFrom == 0)
                #expect(response.redirectChain.map(\.status.code) == [302])
                #expect(response.headerFields[.eTag] == "\"abc\"")
                #expect(bytes(directory.appendingPathComponent("out.bin")) == streamPattern(count: 300_000))
                #expect(entries(directory) == ["out.bin"])
            }
        }
    }

    /// `map`, `mapJSON`, `mapString` and `bodyData()` read the downloaded file.
    @Test func mappingReadsTheDownloadedFile() async throws {
        try await withDirectory { directory in
            try await withServer({ _ in .json(itemJSON) }) { server, session in
                let file = directory.appendingPathComponent("item.json")
                let response = try await Provider<Transfer>(session: session).request(
                    Transfer(server, "/item", task: .downloadDestination(fixed(file))))
                #expect(response.fileURL == file)
                #expect(response.data.isEmpty)
                #expect(try response.bodyData() == Data(itemJSON.utf8))
                #expect(try response.mapString() == itemJSON)
                #expect(try response.mapString(atKeyPath: "name") == "curlew")
                #expect(try response.mapJSON() == ["name": "curlew", "tags": ["a", "b"], "count": 3])
                #expect(try response.map(Item.self) == Item(name: "curlew", tags: ["a", "b"], count: 3))
                #expect(try response.map([String].self, atKeyPath: "tags") == ["a", "b"])
                #expect(response.description == "Status Code: 200, File: \(file.path) (\(itemJSON.utf8.count) bytes)")
            }
        }
    }

    /// A file removed after the download: `bodyData()` fails with `underlying`, carrying the response.
    @Test func bodyDataOfARemovedFileFails() async throws {
        try await withDirectory { directory in
            try await withServer({ _ in .json(itemJSON) }) { server, session in
                let file = directory.appendingPathComponent("item.json")
                let response = try await Provider<Transfer>(session: session).request(
                    Transfer(server, "/item", task: .downloadDestination(fixed(file))))
                try FileManager.default.removeItem(at: file)
                let error = await curlewError { try response.bodyData() }
                guard case .underlying(_, let carried) = error else {
                    Issue.record("expected underlying, got \(String(describing: error))")
                    return
                }
                #expect(carried?.fileURL == file)
            }
        }
    }

    /// The typed call decodes the downloaded file: a 2xx into the value, a 4xx into ApiErrorMessage, a 5xx
    /// page into `unexpected` with the file's bytes.
    @Test func typedCallsDecodeTheDownloadedFile() async throws {
        let handler: LocalHTTPServer.Handler = { request in
            switch request.path {
            case "/item": .json(itemJSON)
            case "/missing": .json(notFoundJSON, status: 404)
            default: .html("<h1>down</h1>", status: 503)
            }
        }
        try await withDirectory { directory in
            try await withServer(handler) { server, session in
                let provider = Provider<Transfer>(session: session)
                func target(_ path: String) -> Transfer {
                    Transfer(server, path, task: .downloadDestination(fixed(directory.appendingPathComponent(String(path.dropFirst())))))
                }
                let success = try await provider.request(target("/item"), as: Item.self)
                #expect(success.value == Item(name: "curlew", tags: ["a", "b"], count: 3))
                #expect(success.response.fileURL == directory.appendingPathComponent("item"))

                let failure = try await provider.request(target("/missing"), as: Item.self)
                #expect(failure.errorMessage == ApiErrorMessage(errorMessage: "Not Found"))
                #expect(failure.statusCode == 404)
                #expect(failure.response.fileURL == directory.appendingPathComponent("missing"))

                let unexpected = try await provider.request(target("/down"), as: Item.self)
                #expect(unexpected.unexpectedError?.statusCode == 503)
                #expect(unexpected.unexpectedError?.body == Data("<h1>down</h1>".utf8))
                #expect(entries(directory) == ["down", "item", "missing"])
            }
        }
    }

    // MARK: downloadParameters

    /// URLEncoding puts the parameters in the query of a GET; JSONEncoding in the body of a POST. The
    /// server's answer (what it received) is the downloaded file.
    @Test func downloadParametersSendsTheParameters() async throws {
        let echo: LocalHTTPServer.Handler = { request in
            .text("\(request.method) \(request.uri) \(request.header("Content-Type") ?? "-") \(request.bodyText)")
        }
        try await withDirectory { directory in
            try await withServer(echo) { server, session in
                let provider = Provider<Transfer>(session: session)
                let query = directory.appendingPathComponent("query.txt")
                let inQuery = try await provider.request(
                    Transfer(
                        server, "/search",
                        task: .downloadParameters(
                            parameters: ["q": "swift curl", "page": 2], encoding: URLEncoding.queryString, destination: fixed(query))))
                #expect(inQuery.fileURL == query)
                #expect(bytes(query).map { String(decoding: $0, as: UTF8.self) } == "GET /search?page=2&q=swift%20curl - ")

                let body = directory.appendingPathComponent("body.txt")
                let inBody = try await provider.request(
                    Transfer(
                        server, "/create", method: .post,
                        task: .downloadParameters(
                            parameters: ["name": "curlew", "count": 3], encoding: JSONEncoding.default, destination: fixed(body))))
                #expect(inBody.fileURL == body)
                #expect(
                    bytes(body).map { String(decoding: $0, as: UTF8.self) }
                        == #"POST /create application/json {"count":3,"name":"curlew"}"#)
                #expect(server.requests.map(\.method) == ["GET", "POST"])
                #expect(entries(directory) == ["body.txt", "query.txt"])
            }
        }
    }

    // MARK: Options

    /// `.createIntermediateDirectories` creates the missing parents; without it the download fails with
    /// `fileWriteFailed` and leaves nothing, not even a directory.
    @Test func intermediateDirectoriesAreCreatedOnlyWithTheOption() async throws {
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let provider = Provider<Transfer>(session: session)
                let file = directory.appendingPathComponent("a/b/c/out.bin")
                let error = await curlewError {
                    try await provider.request(Transfer(server, "/file?n=5000", task: .downloadDestination(fixed(file, []))))
                }
                #expect(transportFailure(error)?.code == .fileWriteFailed)
                #expect(entries(directory) == [])

                let response = try await provider.request(
                    Transfer(server, "/file?n=5000", task: .downloadDestination(fixed(file, [.createIntermediateDirectories]))))
                #expect(response.fileURL == file)
                #expect(bytes(file) == streamPattern(count: 5000))
                #expect(entries(directory.appendingPathComponent("a/b/c")) == ["out.bin"])
                #expect(entries(directory) == ["a"])
            }
        }
    }

    /// Without `.removePreviousFile` an existing file fails the download and stays as it was; with it
    /// the file is replaced.
    @Test func anExistingFileIsReplacedOnlyWithRemovePreviousFile() async throws {
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let provider = Provider<Transfer>(session: session)
                let file = directory.appendingPathComponent("out.bin")
                #expect(FileManager.default.createFile(atPath: file.path, contents: Data("old".utf8)))
                let error = await curlewError {
                    try await provider.request(Transfer(server, "/file?n=5000", task: .downloadDestination(fixed(file, []))))
                }
                let failure = transportFailure(error)
                #expect(failure?.code == .fileWriteFailed)
                #expect(bytes(file) == Array("old".utf8))
                #expect(entries(directory) == ["out.bin"])

                let response = try await provider.request(
                    Transfer(server, "/file?n=5000", task: .downloadDestination(fixed(file, [.removePreviousFile]))))
                #expect(response.download?.fileSize == 5000)
                #expect(bytes(file) == streamPattern(count: 5000))
                #expect(entries(directory) == ["out.bin"])
            }
        }
    }

    /// A destination closure that throws fails the download with `fileWriteFailed` carrying its error;
    /// nothing is written.
    @Test func aThrowingDestinationClosureFailsTheDownload() async throws {
        struct Refused: Error, Equatable {}
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let destination = DownloadDestination { _, _ -> (destinationURL: URL, options: DownloadDestination.Options) in
                    throw Refused()
                }
                let error = await curlewError {
                    try await Provider<Transfer>(session: session).request(
                        Transfer(server, "/file?n=5000", task: .downloadDestination(destination)))
                }
                let failure = transportFailure(error)
                #expect(failure?.code == .fileWriteFailed)
                #expect(failure?.underlying is Refused)
                #expect(entries(directory) == [])
            }
        }
    }

    /// A destination closure that returns a URL that is not a file URL fails the download the same way.
    @Test func aDestinationThatIsNotAFileURLFailsTheDownload() async throws {
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let web = try #require(URL(string: "https://example.com/out.bin"))
                let error = await curlewError {
                    try await Provider<Transfer>(session: session).request(
                        Transfer(server, "/file?n=5000", task: .downloadDestination(DownloadDestination { _, _ in (web, []) })))
                }
                #expect(transportFailure(error)?.code == .fileWriteFailed)
                #expect(entries(directory) == [])
            }
        }
    }

    /// Cancelled while the (async) destination closure runs: `cancelled`, and nothing is written.
    @Test func cancellingWhileTheDestinationIsChosenLeavesNoFile() async throws {
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let entered = Locked(false)
                let destination = DownloadDestination { _, _ in
                    entered.withLock { $0 = true }
                    try await Task.sleep(for: .seconds(60))
                    return (directory.appendingPathComponent("out.bin"), [])
                }
                let provider = Provider<Transfer>(session: session)
                let task = Task { try await provider.request(Transfer(server, "/file?n=5000", task: .downloadDestination(destination))) }
                #expect(await eventually { entered.withLock { $0 } })
                task.cancel()
                let error = await curlewError { try await task.value }
                #expect(error?.isCancellation == true, "\(String(describing: error))")
                #expect(entries(directory) == [])
            }
        }
    }

    // MARK: suggested(in:)

    /// Whatever the server names the file, `suggested(in:)` puts exactly one file, with the expected safe
    /// name, inside the directory, and nothing beside it.
    @Test(arguments: hostileDispositions)
    fileprivate func suggestedStaysInsideTheDirectory(_ hostile: Hostile) async throws {
        let handler: LocalHTTPServer.Handler = { _ in
            .respond(
                status: 200, headers: hostile.disposition.map { [("Content-Disposition", $0)] } ?? [],
                body: Array("payload of \(hostile.why)".utf8))
        }
        try await withDirectory { root in
            let inner = root.appendingPathComponent("inner/deeper")
            try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
            try await withServer(handler) { server, session in
                let result = await Provider<Transfer>(session: session).result(
                    for: Transfer(server, hostile.path, task: .downloadDestination(.suggested(in: inner))))
                #expect(entries(inner) == [hostile.expected])
                #expect(entries(root) == ["inner"])
                #expect(entries(root.appendingPathComponent("inner")) == ["deeper"])
                #expect(bytes(inner.appendingPathComponent(hostile.expected)) == Array("payload of \(hostile.why)".utf8))
                switch result {
                case .success(let response):
                    #expect(response.fileURL == inner.appendingPathComponent(hostile.expected))
                    #expect(response.fileURL?.path == inner.path + "/" + hostile.expected)
                case .failure(let error):
                    Issue.record("the download failed: \(error)")
                }
            }
        }
    }

    /// `suggested(in:)` does not replace a file already there unless asked to (`.removePreviousFile`).
    @Test func suggestedReplacesAPreviousFileOnlyWhenAsked() async throws {
        let handler: LocalHTTPServer.Handler = { request in
            .respond(status: 200, headers: [("Content-Disposition", "attachment; filename=same.txt")], body: Array(request.uri.utf8))
        }
        try await withDirectory { directory in
            try await withServer(handler) { server, session in
                let provider = Provider<Transfer>(session: session)
                _ = try await provider.request(Transfer(server, "/first", task: .downloadDestination(.suggested(in: directory))))
                // The server names the file: by default one already there is not replaced.
                let error = await curlewError {
                    try await provider.request(Transfer(server, "/second", task: .downloadDestination(.suggested(in: directory))))
                }
                #expect(transportFailure(error)?.code == .fileWriteFailed)
                #expect(bytes(directory.appendingPathComponent("same.txt")) == Array("/first".utf8))
                _ = try await provider.request(
                    Transfer(server, "/third", task: .downloadDestination(.suggested(in: directory, options: [.removePreviousFile]))))
                #expect(bytes(directory.appendingPathComponent("same.txt")) == Array("/third".utf8))
                #expect(entries(directory) == ["same.txt"])
            }
        }
    }

    // MARK: Resume

    /// The target's download options keep a partial file: a cut download throws `transport` with resume
    /// data; giving it back in the options sends Range and If-Range (plugins see them) and completes the
    /// file exactly.
    @Test func aCutDownloadResumesThroughTheProvider() async throws {
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let key = UUID().uuidString
                let file = directory.appendingPathComponent("out.bin")
                let sent = SentFields()
                let provider = Provider<Transfer>(session: session, plugins: [sent])
                var target = Transfer(
                    server, "/file?n=200000&etag=v1&key=\(key)&cut=70000&then-cut=", task: .downloadDestination(fixed(file)))
                target.downloadOptions = DownloadOptions(keepsPartialFile: true)

                let error = await curlewError { try await provider.request(target) }
                let failure = transportFailure(error)
                #expect(failure?.code == .connectionClosed)
                let resumeData = try #require(failure?.resumeData)
                #expect(resumeData.byteCount == 70_000)
                #expect(resumeData.validator == .entityTag("\"v1\""))
                #expect(resumeData.destinationPath == file.path)
                #expect(bytes(URL(fileURLWithPath: resumeData.partialFilePath)) == streamPattern(count: 70_000))
                #expect(entries(directory) == [URL(fileURLWithPath: resumeData.partialFilePath).lastPathComponent])
                #expect(entries(directory).allSatisfy(isTemporaryDownload))

                target.downloadOptions = DownloadOptions(resumeData: resumeData)
                let response = try await provider.request(target)
                #expect(response.statusCode == 206)
                #expect(response.fileURL == file)
                #expect(response.download?.resumedFrom == 70_000)
                #expect(response.download?.fileSize == 200_000)
                #expect(response.headerFields[.contentRange] == "bytes 70000-199999/200000")
                #expect(bytes(file) == streamPattern(count: 200_000))
                #expect(entries(directory) == ["out.bin"])

                let log = try await fileLog(server, session, key: key)
                #expect(log.map(\.range) == [nil, "bytes=70000-"])
                #expect(log.map(\.ifRange) == [nil, "\"v1\""])
                #expect(log.map(\.status) == [200, 206])
                #expect(log.map(\.sent) == [70_000, 130_000])
                let seen = sent.all
                #expect(seen.map(\.range) == [nil, "bytes=70000-"])
                #expect(seen.map(\.ifRange) == [nil, "\"v1\""])
                #expect(seen.map(\.acceptEncoding) == ["identity", "identity"])
            }
        }
    }

    /// Without keepsPartialFile a cut download keeps nothing and has no resume data.
    @Test func aCutDownloadWithoutKeepsPartialFileLeavesNothing() async throws {
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let error = await curlewError {
                    try await Provider<Transfer>(session: session).request(
                        Transfer(
                            server, "/file?n=200000&etag=v1&cut=70000",
                            task: .downloadDestination(fixed(directory.appendingPathComponent("out.bin")))))
                }
                let failure = transportFailure(error)
                #expect(failure?.code == .connectionClosed)
                #expect(failure?.resumeData == nil)
                #expect(entries(directory) == [])
            }
        }
    }

    // MARK: Stubs

    /// A stubbed download writes the target's sample data to the destination; the server is never
    /// contacted.
    @Test func aStubbedDownloadWritesTheSampleData() async throws {
        try await withDirectory { directory in
            try await withServer({ _ in .text("network") }) { server, session in
                let heads = Locked<[(status: Int, url: String)]>([])
                let file = directory.appendingPathComponent("stub.bin")
                let destination = DownloadDestination { _, response in
                    heads.withLock { $0.append((response.status.code, response.effectiveURL)) }
                    return (file, [])
                }
                var target = Transfer(server, "/stubbed", task: .downloadDestination(destination))
                target.sampleData = Data("sample bytes".utf8)
                let provider = Provider<Transfer>(stubClosure: Provider.immediatelyStub, session: session)
                let response = try await provider.request(target)
                #expect(response.statusCode == 200)
                #expect(response.fileURL == file)
                #expect(response.data.isEmpty)
                #expect(response.transportResponse == nil)
                #expect(try response.mapString() == "sample bytes")
                #expect(bytes(file) == Array("sample bytes".utf8))
                #expect(entries(directory) == ["stub.bin"])
                #expect(heads.withLock { $0.map(\.status) } == [200])
                #expect(heads.withLock { $0.map(\.url) } == [server.url("/stubbed")])
                #expect(server.statistics.connectionsAccepted == 0)
                #expect(server.statistics.requestsReceived == 0)
            }
        }
    }

    /// A stubbed download's progress is its last element alone, counting the sample data written.
    @Test func aStubbedDownloadsProgressCountsTheSampleData() async throws {
        try await withDirectory { directory in
            let file = directory.appendingPathComponent("stub.bin")
            var target = Transfer("https://stubbed.invalid", "/report", task: .downloadDestination(fixed(file)))
            target.sampleData = Data(repeating: 0x5A, count: 12_345)
            let provider = Provider<Transfer>(stubClosure: Provider.immediatelyStub)
            let received = try await collect(provider.progress(for: target))
            #expect(received.count == 1)
            let last = try #require(received.last)
            #expect(last.progress.isCompleted)
            #expect(last.progress.decodedBytesReceived == 12_345)
            #expect(last.response?.fileURL == file)
            #expect(bytes(file) == [UInt8](repeating: 0x5A, count: 12_345))
            #expect(entries(directory) == ["stub.bin"])
        }
    }

    /// A stubbed upload answers with the sample data without reading what it would upload: the file is
    /// not sent and a stream part's producer never runs.
    @Test func aStubbedUploadReadsNothing() async throws {
        try await withDirectory { directory in
            try await withServer({ _ in .text("network") }) { server, session in
                let file = directory.appendingPathComponent("upload.bin")
                #expect(FileManager.default.createFile(atPath: file.path, contents: Data(repeating: 7, count: 10_000)))
                let produced = Locked(false)
                let stream = FormDataStream(length: 5) { writer in
                    produced.withLock { $0 = true }
                    try await writer.write(Array("12345".utf8))
                }
                let form: MultipartFormData = [
                    MultipartFormBodyPart(provider: .data(Data("field".utf8)), name: "field"),
                    MultipartFormBodyPart(provider: .file(file), name: "file"),
                    MultipartFormBodyPart(provider: .stream(stream), name: "stream", fileName: "s.bin", mimeType: "application/octet-stream"),
                ]
                let provider = Provider<Transfer>(stubClosure: Provider.immediatelyStub, session: session)
                for task in [RequestTask.uploadFile(file), .uploadMultipart(form), .uploadCompositeMultipart(form, urlParameters: ["a": 1])] {
                    var target = Transfer(server, "/upload", method: .post, task: task)
                    target.sampleData = Data("stubbed upload".utf8)
                    let response = try await provider.request(target)
                    #expect(response.statusCode == 200)
                    #expect(response.data == Data("stubbed upload".utf8))
                    #expect(response.fileURL == nil)
                }
                #expect(!produced.withLock { $0 })
                #expect(server.statistics.connectionsAccepted == 0)
                #expect(bytes(file) == [UInt8](repeating: 7, count: 10_000))
            }
        }
    }

    // MARK: Validation, plugins, retries, cancellation

    /// `.successCodes` fails a 404 download with `.statusCode(response)`: the error body is read into the
    /// response's data and the destination is left as it was (a previous good file is not replaced).
    @Test func validationFailsA404DownloadLeavingTheDestinationAlone() async throws {
        try await withDirectory { directory in
            try await withServer({ _ in .json(notFoundJSON, status: 404) }) { server, session async throws in
                let file = directory.appendingPathComponent("out.json")
                try Data("previous".utf8).write(to: file)
                var target = Transfer(server, "/missing", task: .downloadDestination(fixed(file)))
                target.validationType = .successCodes
                let error = await curlewError { try await Provider<Transfer>(session: session).request(target) }
                guard case .statusCode(let response) = error else {
                    Issue.record("expected statusCode, got \(String(describing: error))")
                    return
                }
                #expect(response.statusCode == 404)
                #expect(response.fileURL == nil)
                #expect(response.data == Data(notFoundJSON.utf8))
                #expect(try response.map(ApiErrorMessage.self) == ApiErrorMessage(errorMessage: "Not Found"))
                #expect(bytes(file) == Array("previous".utf8))
                #expect(entries(directory) == ["out.json"])
            }
        }
    }

    /// Without validation, a 404's body is downloaded like any other: the file holds the error body.
    @Test func withoutValidationA404IsDownloaded() async throws {
        try await withDirectory { directory in
            try await withServer({ _ in .json(notFoundJSON, status: 404) }) { server, session async throws in
                let file = directory.appendingPathComponent("out.json")
                let response = try await Provider<Transfer>(session: session).request(
                    Transfer(server, "/missing", task: .downloadDestination(fixed(file))))
                #expect(response.statusCode == 404)
                #expect(response.fileURL == file)
                #expect(response.data.isEmpty)
                #expect(try response.bodyData() == Data(notFoundJSON.utf8))
                #expect(bytes(file) == Array(notFoundJSON.utf8))
            }
        }
    }

    /// Plugins see one prepare, willSend, didReceive and process for a download, and what prepare adds
    /// reaches the server.
    @Test func pluginsSeeADownloadOnce() async throws {
        try await withDirectory { directory in
            try await withServer({ _ in .text("plugged") }) { server, session in
                let recorder = Recorder()
                let provider = Provider<Transfer>(session: session, plugins: [RecordingPlugin(name: "p", recorder: recorder)])
                let file = directory.appendingPathComponent("out.txt")
                let response = try await provider.request(Transfer(server, "/p", task: .downloadDestination(fixed(file))))
                #expect(response.fileURL == file)
                #expect(recorder.all == ["p.prepare", "p.willSend", "p.didReceive(200)", "p.process"])
                #expect(server.requests.map { $0.header("X-Plugin-p") } == ["yes"])
                #expect(bytes(file) == Array("plugged".utf8))
            }
        }
    }

    /// A retry middleware retrying a 503 (or a connection closed before any response byte) and then
    /// downloading the 200 leaves exactly one file, the 200's, and no temporary file.
    @Test(arguments: ["503", "closed"])
    func aRetriedDownloadLeavesOneFile(firstAnswer: String) async throws {
        let count = Locked(0)
        let handler: LocalHTTPServer.Handler = { _ in
            let number = count.withLock { count in
                count += 1
                return count
            }
            guard number == 1 else { return .text("the real file") }
            if firstAnswer == "503" { return .text("busy, try again", status: 503, headers: [("Retry-After", "0")]) }
            return .raw([], after: .close)
        }
        try await withDirectory { directory in
            try await withServer(handler) { server, session in
                let log = Recorder()
                let provider = Provider<Transfer>(
                    session: session, plugins: [RecordingPlugin(name: "p", recorder: log)],
                    middleware: [RetryMiddleware(policy: RetryPolicy(backoff: Backoff(base: .milliseconds(1), cap: .milliseconds(1))))])
                let file = directory.appendingPathComponent("out.txt")
                let response = try await provider.request(Transfer(server, "/flaky", task: .downloadDestination(fixed(file))))
                #expect(response.statusCode == 200)
                #expect(response.fileURL == file)
                #expect(bytes(file) == Array("the real file".utf8))
                #expect(entries(directory) == ["out.txt"])
                #expect(server.statistics.requestsReceived == 2)
                #expect(log.all == ["p.prepare", "p.willSend", "p.didReceive(200)", "p.process"])
            }
        }
    }

    /// A middleware that sends a download again after it broke off mid-body: the partial file the failed
    /// attempt kept is removed once a later attempt writes the file; when every attempt breaks off, one
    /// partial file is left, the one the error's resume data describes.
    @Test(arguments: [true, false])
    func attemptsThatBreakOffLeaveOnlyWhatTheOutcomeNeeds(laterAttemptSucceeds: Bool) async throws {
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let key = UUID().uuidString
                let file = directory.appendingPathComponent("out.bin")
                let query = "n=200000&etag=v1&key=\(key)&cut=70000" + (laterAttemptSucceeds ? "&then-cut=" : "")
                var target = Transfer(server, "/file?\(query)", task: .downloadDestination(fixed(file)))
                target.downloadOptions = DownloadOptions(keepsPartialFile: true)
                let provider = Provider<Transfer>(session: session, middleware: [RetryAnyTransportFailure(attempts: 3)])
                let result = await provider.result(for: target)
                let log = try await fileLog(server, session, key: key)
                switch (result, laterAttemptSucceeds) {
                case (.success(let response), true):
                    #expect(response.statusCode == 200)
                    #expect(response.download?.fileSize == 200_000)
                    #expect(bytes(file) == streamPattern(count: 200_000))
                    #expect(entries(directory) == ["out.bin"])
                    #expect(log.map(\.sent) == [70_000, 200_000])
                case (.failure(.transport(let failure)), false):
                    let resumeData = try #require(failure.resumeData)
                    #expect(resumeData.byteCount == 70_000)
                    #expect(entries(directory) == [URL(fileURLWithPath: resumeData.partialFilePath).lastPathComponent])
                    #expect(bytes(URL(fileURLWithPath: resumeData.partialFilePath)) == streamPattern(count: 70_000))
                    #expect(log.map(\.sent) == [70_000, 70_000, 70_000])
                default:
                    Issue.record("unexpected outcome \(result)")
                }
            }
        }
    }

    /// A middleware that tried again and then failed with an error of its own (no resume data can travel
    /// with it): the partial files the attempts kept are removed, the directory is empty.
    @Test func aMiddlewaresOwnFailureAfterBrokenAttemptsLeavesNoPartialFile() async throws {
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let key = UUID().uuidString
                var target = Transfer(
                    server, "/file?n=200000&etag=v1&key=\(key)&cut=70000",
                    task: .downloadDestination(fixed(directory.appendingPathComponent("out.bin"))))
                target.downloadOptions = DownloadOptions(keepsPartialFile: true)
                let provider = Provider<Transfer>(session: session, middleware: [RetryOnceThenFailOwnWay()])
                let result = await provider.result(for: target)
                guard case .failure(.underlying(let error, nil)) = result else {
                    Issue.record("expected the middleware's own failure, got \(result)")
                    return
                }
                #expect(error is RetryOnceThenFailOwnWay.GaveUp)
                let sent = try await fileLog(server, session, key: key).map(\.sent)
                #expect(sent == [70_000, 70_000])
                #expect(entries(directory) == [])
            }
        }
    }

    /// Cancelled while its temporary file is being written: `cancelled`, and the directory is empty.
    @Test func cancellingMidDownloadLeavesNoFile() async throws {
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let provider = Provider<Transfer>(session: session)
                let target = Transfer(
                    server, "/file?n=4000000&pace=1000000&chunk=10000&etag=v1",
                    task: .downloadDestination(fixed(directory.appendingPathComponent("out.bin"))))
                let task = Task { try await provider.request(target) }
                let writing = await eventually {
                    entries(directory).contains { name in
                        isTemporaryDownload(name)
                            && ((try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path))?[.size]
                                as? NSNumber)?.intValue ?? 0 > 0
                    }
                }
                #expect(writing)
                task.cancel()
                let error = await curlewError { try await task.value }
                #expect(error?.isCancellation == true, "\(String(describing: error))")
                #expect(transportFailure(error)?.resumeData == nil)
                #expect(entries(directory) == [])
            }
        }
    }

    // MARK: Progress

    /// A download's progress through the provider: bytes received never fall, and the last element
    /// carries the response with its file, counting every byte.
    @Test func aDownloadsProgressEndsWithTheFile() async throws {
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let file = directory.appendingPathComponent("out.bin")
                let provider = Provider<Transfer>(session: session)
                let received = try await collect(
                    provider.progress(
                        for: Transfer(server, "/file?n=500000&pace=1000000&chunk=5000", task: .downloadDestination(fixed(file)))))
                for (previous, next) in zip(received, received.dropFirst()) {
                    #expect(next.progress.bytesReceived >= previous.progress.bytesReceived)
                    #expect(next.progress.decodedBytesReceived >= previous.progress.decodedBytesReceived)
                    #expect(next.progress.fractionCompleted >= previous.progress.fractionCompleted)
                }
                #expect(received.dropLast().allSatisfy { $0.response == nil && !$0.progress.isCompleted })
                #expect(received.dropLast().contains { $0.progress.bytesReceived > 0 && $0.progress.bytesReceived < 500_000 })
                let last = try #require(received.last)
                #expect(last.progress.isCompleted)
                #expect(last.progress.bytesReceived == 500_000)
                #expect(last.progress.expectedBytesToReceive == 500_000)
                #expect(last.progress.decodedBytesReceived == 500_000)
                #expect(last.progress.fractionCompleted == 1)
                let response = try #require(last.response)
                #expect(response.fileURL == file)
                #expect(response.data.isEmpty)
                #expect(response.download?.fileSize == 500_000)
                #expect(bytes(file) == streamPattern(count: 500_000))
                #expect(entries(directory) == ["out.bin"])
            }
        }
    }

    /// The typed progress's last element carries the ApiResult decoded from the file.
    @Test func theTypedProgressEndsWithTheApiResult() async throws {
        let handler: LocalHTTPServer.Handler = { request in
            request.path == "/item" ? .json(itemJSON) : .json(notFoundJSON, status: 404)
        }
        try await withDirectory { directory in
            try await withServer(handler) { server, session in
                let provider = Provider<Transfer>(session: session)
                let item = directory.appendingPathComponent("item.json")
                let success = try await collect(
                    provider.progress(for: Transfer(server, "/item", task: .downloadDestination(fixed(item))), as: Item.self))
                let result = try #require(success.last?.response)
                #expect(result.value == Item(name: "curlew", tags: ["a", "b"], count: 3))
                #expect(result.response.fileURL == item)
                #expect(success.last?.progress.decodedBytesReceived == itemJSON.utf8.count)

                let missing = directory.appendingPathComponent("missing.json")
                let failure = try await collect(
                    provider.progress(for: Transfer(server, "/missing", task: .downloadDestination(fixed(missing))), as: Item.self))
                let message = try #require(failure.last?.response)
                #expect(message.errorMessage == ApiErrorMessage(errorMessage: "Not Found"))
                #expect(message.response.fileURL == missing)
                #expect(entries(directory) == ["item.json", "missing.json"])
            }
        }
    }

    /// A multipart upload's progress counts bytes sent up to the body's exact length, which is what the
    /// server receives, byte for byte.
    @Test func aMultipartUploadsProgressReachesTheBodysLength() async throws {
        try await withDirectory { directory in
            try await withServer({ request in .text("received \(request.body.count)") }) { server, session in
                let fileBytes = [UInt8]((0..<150_000).map { UInt8(truncatingIfNeeded: $0 % 253) })
                let file = directory.appendingPathComponent("photo.png")
                #expect(FileManager.default.createFile(atPath: file.path, contents: Data(fileBytes)))
                let fieldBytes = Data(repeating: 0x61, count: 100_000)
                let streamBytes = [UInt8](repeating: 0x62, count: 80_000)
                let stream = FormDataStream(length: streamBytes.count, replayable: true) { writer in
                    for start in stride(from: 0, to: streamBytes.count, by: 10_000) {
                        try await writer.write(streamBytes[start..<(start + 10_000)])
                    }
                }
                let boundary = "progress-boundary"
                let form = MultipartFormData(
                    parts: [
                        MultipartFormBodyPart(provider: .data(fieldBytes), name: "field"),
                        MultipartFormBodyPart(provider: .file(file), name: "photo"),
                        MultipartFormBodyPart(provider: .stream(stream), name: "blob", fileName: "blob.bin", mimeType: "application/x-blob"),
                    ], boundary: boundary)
                var expected = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\n".utf8)
                expected.append(fieldBytes)
                expected.append(
                    Data(
                        "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"photo.png\"\r\nContent-Type: image/png\r\n\r\n"
                            .utf8))
                expected.append(contentsOf: fileBytes)
                expected.append(
                    Data(
                        "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"blob.bin\"\r\nContent-Type: application/x-blob\r\n\r\n"
                            .utf8))
                expected.append(contentsOf: streamBytes)
                expected.append(Data("\r\n--\(boundary)--\r\n".utf8))

                let provider = Provider<Transfer>(session: session)
                let received = try await collect(
                    provider.progress(for: Transfer(server, "/upload", method: .post, task: .uploadMultipart(form))))
                for (previous, next) in zip(received, received.dropFirst()) {
                    #expect(next.progress.bytesSent >= previous.progress.bytesSent)
                }
                #expect(received.allSatisfy { $0.progress.expectedBytesToSend == expected.count })
                let last = try #require(received.last)
                #expect(last.progress.bytesSent == expected.count)
                #expect(last.response?.data == Data("received \(expected.count)".utf8))
                #expect(server.requests.last.map { Data($0.body) } == expected)
                #expect(server.requests.last?.header("Content-Type") == "multipart/form-data; boundary=\(boundary)")
                #expect(server.requests.last?.header("Content-Length") == String(expected.count))
            }
        }
    }
}
