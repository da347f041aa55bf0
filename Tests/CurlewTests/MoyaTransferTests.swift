// Curlew — Moya's transfer-task scenarios, as Moya's own test suite has them: endpoint equality and
// hashing for upload and download tasks, `replacing(task:)` and `urlRequest()` for each of the five
// transfer tasks, in-flight tracking that never shares a transfer, `URL(target:)`, `endpoint(_:)`,
// `result(for:)` and MultiTarget's download options. What goes over the network goes to real loopback
// servers.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

// MARK: Helpers

/// An endpoint for the equality and request tests.
private func endpoint(
    _ task: RequestTask, url: String = "https://api.example.com/upload", method: HTTPRequest.Method = .post,
    headers: [String: String]? = ["Accept": "application/json"]
) -> Endpoint {
    Endpoint(
        url: url, sampleResponseClosure: { .networkResponse(200, Data("sample".utf8)) }, method: method, task: task,
        httpHeaderFields: headers)
}

/// A destination that is never used (equality ignores it).
private func unusedDestination(_ name: String) -> DownloadDestination {
    DownloadDestination { _, _ in (URL(fileURLWithPath: "/nonexistent/\(name)"), []) }
}

/// Runs `body` with a fresh directory (a file URL), removed afterwards.
private func withDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-moya-transfer-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return try await ensuring({ try await body(directory) }, cleanUp: { try? FileManager.default.removeItem(at: directory) })
}

/// The names in `directory`, sorted.
private func entries(_ directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
}

/// A file with `contents` in `directory`.
private func makeFile(_ directory: URL, _ name: String, _ contents: String) throws -> URL {
    let url = directory.appendingPathComponent(name)
    try Data(contents.utf8).write(to: url)
    return url
}

/// A target whose every part a test sets.
private struct Moya: TargetType {
    var base: String
    var path: String
    var method: HTTPRequest.Method = .get
    var task: RequestTask = .requestPlain
    var headers: [String: String]? = nil
    var validationType: ValidationType = .none
    var downloadOptions: DownloadOptions = DownloadOptions()

    var baseURL: URL { URL(string: base) ?? URL(fileURLWithPath: "/") }

    init(base: String, path: String, method: HTTPRequest.Method = .get, task: RequestTask = .requestPlain) {
        self.base = base
        self.path = path
        self.method = method
        self.task = task
    }
}

/// The multipart body for parts `a` (a field) and `b` (a text file) with `boundary`.
private func twoPartBody(_ boundary: String) -> Data {
    Data(
        ("--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nAAA\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"b\"; filename=\"b.txt\"\r\nContent-Type: text/plain\r\n\r\nBBB\r\n"
            + "--\(boundary)--\r\n").utf8)
}

private let twoParts: [MultipartFormBodyPart] = [
    MultipartFormBodyPart(provider: .data(Data("AAA".utf8)), name: "a"),
    MultipartFormBodyPart(provider: .data(Data("BBB".utf8)), name: "b", fileName: "b.txt", mimeType: "text/plain"),
]

/// The boundary a `multipart/form-data; boundary=…` Content-Type names.
private func boundary(of request: TransportRequest) -> String? {
    guard let type = request.headerFields[.contentType], type.hasPrefix("multipart/form-data; boundary=") else { return nil }
    return String(type.dropFirst("multipart/form-data; boundary=".count))
}

/// Whether `text` is a boundary Curlew draws: `curlew-` and 32 lowercase hex digits.
private func isRandomBoundary(_ text: String?) -> Bool {
    guard let text, text.hasPrefix("curlew-") else { return false }
    let hex = text.dropFirst("curlew-".count)
    return hex.count == 32 && hex.allSatisfy { $0.isHexDigit && !$0.isUppercase }
}

@Suite struct MoyaTransferTests {
    // MARK: Endpoint equality for upload tasks

    /// Moya's EndpointSpec: `.uploadFile` endpoints are equal for the same file URL and different for
    /// another, whether the file exists (the request builds) or not (it does not).
    @Test func uploadFileEndpointsCompareTheFileURL() async throws {
        try await withDirectory { directory in
            let file = try makeFile(directory, "one.txt", "one")
            let other = try makeFile(directory, "two.txt", "one")
            let same = endpoint(.uploadFile(file))
            #expect(same == endpoint(.uploadFile(directory.appendingPathComponent("one.txt"))))
            #expect(same.hashValue == endpoint(.uploadFile(file)).hashValue)
            // Same bytes, another file: not the same upload.
            #expect(same != endpoint(.uploadFile(other)))

            // Comparing never touches the file: its hash stays when the file goes away.
            let hashBefore = same.hashValue
            try FileManager.default.removeItem(at: file)
            #expect(same.hashValue == hashBefore)
            #expect(same == endpoint(.uploadFile(file)))

            let missing = directory.appendingPathComponent("missing.txt")
            #expect(endpoint(.uploadFile(missing)) == endpoint(.uploadFile(missing)))
            #expect(endpoint(.uploadFile(missing)).hashValue == endpoint(.uploadFile(missing)).hashValue)
            #expect(endpoint(.uploadFile(missing)) != endpoint(.uploadFile(directory.appendingPathComponent("gone.txt"))))
            // Another file, present or not.
            #expect(same != endpoint(.uploadFile(missing)))

            // Moya's own spec uses a web URL: it never builds, and still compares by the URL.
            let google = try #require(URL(string: "https://google.com"))
            let googleQuery = try #require(URL(string: "https://google.com?q=test"))
            #expect(endpoint(.uploadFile(google)) == endpoint(.uploadFile(google)))
            #expect(endpoint(.uploadFile(google)) != endpoint(.uploadFile(googleQuery)))
        }
    }

    /// The same form is the same upload, though each request draws its own random boundary; other parts,
    /// or other explicit boundaries, are not.
    @Test func uploadMultipartEndpointsCompareTheForm() throws {
        let form = MultipartFormData(parts: twoParts)
        let first = endpoint(.uploadMultipart(form))
        let second = endpoint(.uploadMultipart(MultipartFormData(parts: twoParts)))
        // The random boundary differs per request...
        let firstBoundary = boundary(of: try first.urlRequest())
        let secondBoundary = boundary(of: try second.urlRequest())
        #expect(isRandomBoundary(firstBoundary))
        #expect(isRandomBoundary(secondBoundary))
        #expect(firstBoundary != secondBoundary)
        // ...and is not compared.
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(Set([first, second, endpoint(.uploadMultipart(form))]).count == 1)

        let otherParts = MultipartFormData(parts: [twoParts[0]])
        #expect(first != endpoint(.uploadMultipart(otherParts)))
        let otherBytes = MultipartFormData(parts: [twoParts[0], MultipartFormBodyPart(provider: .data(Data("CCC".utf8)), name: "b", fileName: "b.txt", mimeType: "text/plain")])
        #expect(first != endpoint(.uploadMultipart(otherBytes)))
        let otherName = MultipartFormData(parts: [twoParts[0], MultipartFormBodyPart(provider: .data(Data("BBB".utf8)), name: "c", fileName: "b.txt", mimeType: "text/plain")])
        #expect(first != endpoint(.uploadMultipart(otherName)))

        let fixedA = endpoint(.uploadMultipart(MultipartFormData(parts: twoParts, boundary: "boundary-a")))
        let fixedB = endpoint(.uploadMultipart(MultipartFormData(parts: twoParts, boundary: "boundary-b")))
        #expect(fixedA != fixedB)
        #expect(fixedA == endpoint(.uploadMultipart(MultipartFormData(parts: twoParts, boundary: "boundary-a"))))
        #expect(fixedA.hashValue == endpoint(.uploadMultipart(MultipartFormData(parts: twoParts, boundary: "boundary-a"))).hashValue)
        // A fixed boundary is not the same form as a random one.
        #expect(fixedA != first)

        // Composite: the form and the query both count.
        let composite = endpoint(.uploadCompositeMultipart(form, urlParameters: ["page": 1]))
        #expect(composite == endpoint(.uploadCompositeMultipart(MultipartFormData(parts: twoParts), urlParameters: ["page": 1])))
        #expect(composite.hashValue == endpoint(.uploadCompositeMultipart(form, urlParameters: ["page": 1])).hashValue)
        #expect(composite != endpoint(.uploadCompositeMultipart(form, urlParameters: ["page": 2])))
        #expect(composite != endpoint(.uploadCompositeMultipart(otherParts, urlParameters: ["page": 1])))
    }

    /// File parts compare their file URL; stream parts their identity (the same stream is equal, another
    /// with the same bytes is not), as Moya compares input streams.
    @Test func multipartFileAndStreamPartsCompareByIdentity() async throws {
        try await withDirectory { directory in
            let file = try makeFile(directory, "f.txt", "file")
            let other = try makeFile(directory, "g.txt", "file")
            func withFile(_ url: URL) -> Endpoint {
                endpoint(.uploadMultipart([MultipartFormBodyPart(provider: .file(url), name: "f")]))
            }
            #expect(withFile(file) == withFile(directory.appendingPathComponent("f.txt")))
            #expect(withFile(file).hashValue == withFile(file).hashValue)
            #expect(withFile(file) != withFile(other))

            let stream = FormDataStream(length: 3) { writer in try await writer.write(Array("abc".utf8)) }
            let twin = FormDataStream(length: 3) { writer in try await writer.write(Array("abc".utf8)) }
            func withStream(_ stream: FormDataStream) -> Endpoint {
                endpoint(.uploadMultipart([MultipartFormBodyPart(provider: .stream(stream), name: "s")]))
            }
            #expect(withStream(stream) == withStream(stream))
            #expect(withStream(stream).hashValue == withStream(stream).hashValue)
            #expect(withStream(stream) != withStream(twin))
        }
    }

    // MARK: Endpoint equality for download tasks

    /// Download endpoints compare their request, not their destination closure; a download never equals
    /// an endpoint that does not download, even one that builds the same request.
    @Test func downloadEndpointsIgnoreTheDestinationAndNeverEqualAPlainRequest() throws {
        let one = endpoint(.downloadDestination(unusedDestination("one")), method: .get)
        let two = endpoint(.downloadDestination(unusedDestination("two")), method: .get)
        #expect(one == two)
        #expect(one.hashValue == two.hashValue)
        #expect(Set([one, two]).count == 1)

        let plain = endpoint(.requestPlain, method: .get)
        #expect(try one.urlRequest() == plain.urlRequest())
        #expect(one != plain)
        #expect(Set([one, plain]).count == 2)

        let query = endpoint(
            .downloadParameters(parameters: ["page": 1], encoding: URLEncoding.queryString, destination: unusedDestination("one")),
            method: .get)
        let sameQuery = endpoint(
            .downloadParameters(parameters: ["page": 1], encoding: URLEncoding.queryString, destination: unusedDestination("two")),
            method: .get)
        let otherQuery = endpoint(
            .downloadParameters(parameters: ["page": 2], encoding: URLEncoding.queryString, destination: unusedDestination("one")),
            method: .get)
        #expect(query == sameQuery)
        #expect(query.hashValue == sameQuery.hashValue)
        #expect(query != otherQuery)
        #expect(query != one)
        let plainQuery = endpoint(.requestParameters(parameters: ["page": 1], encoding: URLEncoding.queryString), method: .get)
        #expect(try query.urlRequest() == plainQuery.urlRequest())
        #expect(query != plainQuery)

        // Other URL, method or header fields: not equal.
        #expect(one != endpoint(.downloadDestination(unusedDestination("one")), url: "https://api.example.com/other", method: .get))
        #expect(one != endpoint(.downloadDestination(unusedDestination("one")), method: .post))
        #expect(one != endpoint(.downloadDestination(unusedDestination("one")), method: .get, headers: ["Accept": "text/plain"]))
    }

    /// Uploads and downloads never equal one another, nor a plain request, with the same URL.
    @Test func transferTasksOfDifferentKindsAreNotEqual() async throws {
        try await withDirectory { directory in
            let file = try makeFile(directory, "f.txt", "AAA")
            let endpoints = [
                endpoint(.requestPlain), endpoint(.requestData(Data("AAA".utf8))), endpoint(.uploadFile(file)),
                endpoint(.uploadMultipart(MultipartFormData(parts: twoParts))),
                endpoint(.downloadDestination(unusedDestination("d"))),
            ]
            for (index, left) in endpoints.enumerated() {
                for (otherIndex, right) in endpoints.enumerated() where otherIndex != index {
                    #expect(left != right, "\(index) and \(otherIndex)")
                }
            }
            #expect(Set(endpoints).count == endpoints.count)
        }
    }

    // MARK: replacing(task:)

    /// Replacing the task with each transfer task keeps the URL, method and header fields.
    @Test func replacingTheTaskWithATransferTaskKeepsTheRest() async throws {
        try await withDirectory { directory in
            let file = try makeFile(directory, "f.txt", "AAA")
            let original = endpoint(.requestParameters(parameters: ["x": 1], encoding: URLEncoding.queryString), method: .put,
                headers: ["Accept": "application/json", "X-Trace": "t1"])
            let tasks: [RequestTask] = [
                .uploadFile(file), .uploadMultipart(MultipartFormData(parts: twoParts)),
                .uploadCompositeMultipart(MultipartFormData(parts: twoParts), urlParameters: ["q": "a"]),
                .downloadDestination(unusedDestination("d")),
                .downloadParameters(parameters: ["q": "a"], encoding: URLEncoding.queryString, destination: unusedDestination("d")),
            ]
            for task in tasks {
                let replaced = original.replacing(task: task)
                #expect(replaced.url == original.url)
                #expect(replaced.method == .put)
                #expect(replaced.httpHeaderFields == ["Accept": "application/json", "X-Trace": "t1"])
                let request = try replaced.urlRequest()
                #expect(request.method == .put)
                #expect(request.headerFields[.accept] == "application/json")
                #expect(request.headerFields[try #require(HTTPField.Name("X-Trace"))] == "t1")
                // The original's parameters went with its task.
                #expect(!request.url.contains("x=1"))
            }
        }
    }

    // MARK: urlRequest() for each transfer task

    /// `.uploadFile`: the body is the file (its length known, its bytes the file's); no Content-Type is
    /// added, and a target's own is kept.
    @Test func uploadFileRequestsSendTheFile() async throws {
        try await withDirectory { directory in
            let contents = String(repeating: "file body ", count: 1000)
            let file = try makeFile(directory, "upload.bin", contents)
            let request = try endpoint(.uploadFile(file)).urlRequest()
            #expect(request.url == "https://api.example.com/upload")
            #expect(request.method == .post)
            #expect(request.body?.filePath == file.path)
            #expect(request.body?.knownLength == contents.utf8.count)
            #expect(request.body?.inMemoryBytes == nil)
            #expect(try await request.body?.collect(upTo: 1 << 20) == Data(contents.utf8))
            #expect(request.headerFields[.contentType] == nil)
            #expect(request.headerFields.map(\.name) == [.accept])

            let typed = try endpoint(.uploadFile(file), headers: ["Content-Type": "image/png"]).urlRequest()
            #expect(typed.headerFields[.contentType] == "image/png")

            let notAFile = try #require(URL(string: "https://example.com/file.bin"))
            guard case .requestMapping = await curlewError({ try endpoint(.uploadFile(notAFile)).urlRequest() }) else {
                Issue.record("a web URL must be refused as a request-mapping error")
                return
            }
            let missing = await curlewError { try endpoint(.uploadFile(directory.appendingPathComponent("missing"))).urlRequest() }
            guard case .transport(let failure) = missing else {
                Issue.record("expected transport(invalidBody), got \(String(describing: missing))")
                return
            }
            #expect(failure.code == .invalidBody)
        }
    }

    /// `.uploadMultipart`: `multipart/form-data` with the boundary the body uses, replacing the target's
    /// own Content-Type; the body is exactly the encoded form.
    @Test func uploadMultipartRequestsSendTheForm() throws {
        let request = try endpoint(
            .uploadMultipart(MultipartFormData(parts: twoParts)), headers: ["Content-Type": "application/json", "Accept": "*/*"]
        ).urlRequest()
        let drawn = try #require(boundary(of: request))
        #expect(isRandomBoundary(drawn))
        #expect(request.headerFields[values: .contentType] == ["multipart/form-data; boundary=\(drawn)"])
        #expect(request.body?.inMemoryBytes == twoPartBody(drawn))
        #expect(request.body?.knownLength == twoPartBody(drawn).count)
        #expect(request.url == "https://api.example.com/upload")

        let fixed = try endpoint(.uploadMultipart(MultipartFormData(parts: twoParts, boundary: "fixed-boundary"))).urlRequest()
        #expect(fixed.headerFields[.contentType] == "multipart/form-data; boundary=fixed-boundary")
        #expect(fixed.body?.inMemoryBytes == twoPartBody("fixed-boundary"))
    }

    /// `.uploadCompositeMultipart`: the form as for `.uploadMultipart`, its parameters in the query.
    @Test func uploadCompositeMultipartRequestsPutTheParametersInTheQuery() throws {
        let request = try endpoint(
            .uploadCompositeMultipart(MultipartFormData(parts: twoParts, boundary: "b0"), urlParameters: ["b": "two words", "a": 1]),
            url: "https://api.example.com/upload?existing=yes"
        ).urlRequest()
        #expect(request.url == "https://api.example.com/upload?existing=yes&a=1&b=two%20words")
        #expect(request.headerFields[.contentType] == "multipart/form-data; boundary=b0")
        #expect(request.body?.inMemoryBytes == twoPartBody("b0"))
    }

    /// `.downloadDestination`: the request as it is, no body.
    @Test func downloadDestinationRequestsHaveNoBody() throws {
        let request = try endpoint(.downloadDestination(unusedDestination("d")), method: .get).urlRequest()
        #expect(request == TransportRequest(url: "https://api.example.com/upload", method: .get, headerFields: [.accept: "application/json"]))
        #expect(request.body == nil)
    }

    /// `.downloadParameters`: the parameters encoded as the encoding says, in the query or the body.
    @Test func downloadParametersRequestsEncodeTheParameters() throws {
        let destination = unusedDestination("d")
        let query = try endpoint(
            .downloadParameters(parameters: ["q": "swift curl", "page": 2], encoding: URLEncoding.queryString, destination: destination),
            method: .get
        ).urlRequest()
        #expect(query.url == "https://api.example.com/upload?page=2&q=swift%20curl")
        #expect(query.body == nil)

        let json = try endpoint(
            .downloadParameters(parameters: ["name": "curlew", "count": 3], encoding: JSONEncoding.default, destination: destination)
        ).urlRequest()
        #expect(json.url == "https://api.example.com/upload")
        #expect(json.body?.inMemoryBytes == Data(#"{"count":3,"name":"curlew"}"#.utf8))
        #expect(json.headerFields[.contentType] == "application/json")

        let form = try endpoint(
            .downloadParameters(parameters: ["name": "curlew"], encoding: URLEncoding.httpBody, destination: destination)
        ).urlRequest()
        #expect(form.body?.inMemoryBytes == Data("name=curlew".utf8))
        #expect(form.headerFields[.contentType] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    // MARK: Moya's spelling of download destinations

    /// `.downloadDestination { temporaryURL, response in … }` and `.downloadParameters(…, destination: {
    /// … })`, as Moya's documents write them, compile and download to the file the closure names (before,
    /// the closure did not convert to the `DownloadDestination` struct).
    @Test func moyasClosureSpellingDownloads() async throws {
        let handler: LocalHTTPServer.Handler = { request in
            .text("got \(request.uri)", headers: [("Content-Disposition", "attachment; filename=\"report.txt\"")])
        }
        try await withDirectory { directory in
            try await withServer(handler) { server, session in
                let provider = Provider<Moya>(session: session)
                let plain = Moya(
                    base: server.baseURL, path: "/report",
                    task: .downloadDestination { temporaryURL, response in
                        #expect(temporaryURL.isFileURL)
                        return (directory.appendingPathComponent(response.suggestedFilename ?? "none"), [.removePreviousFile])
                    })
                let first = try await provider.request(plain)
                #expect(first.fileURL == directory.appendingPathComponent("report.txt"))
                #expect(try first.mapString() == "got /report")
                let withParameters = Moya(
                    base: server.baseURL, path: "/report",
                    task: .downloadParameters(parameters: ["page": 2], encoding: URLEncoding.queryString) { _, _ in
                        (directory.appendingPathComponent("page2.txt"), [])
                    })
                let second = try await provider.request(withParameters)
                #expect(second.fileURL == directory.appendingPathComponent("page2.txt"))
                #expect(try second.mapString() == "got /report?page=2")
                #expect(entries(directory) == ["page2.txt", "report.txt"])
            }
        }
    }

    // MARK: In-flight tracking never shares a transfer

    /// Two identical GET downloads at the same time, with `trackInflights`: the server holds its answers
    /// until both requests have arrived, so each must have sent its own; each gets its own file.
    @Test func identicalConcurrentDownloadsAreNotShared() async throws {
        let arrivals = Locked(0)
        let handler: LocalHTTPServer.Handler = { _ in
            let number = arrivals.withLock { count in
                count += 1
                return count
            }
            // Shared, the second request would never come: the answer goes out after the wait anyway.
            _ = await eventually(within: 10) { arrivals.withLock { $0 } >= 2 }
            return .text("answer \(number)")
        }
        try await withDirectory { directory in
            try await withServer(handler) { server, session in
                let provider = Provider<Moya>(session: session, trackInflights: true)
                func target(_ name: String) -> Moya {
                    Moya(
                        base: server.baseURL, path: "/same",
                        task: .downloadDestination(DownloadDestination { _, _ in (directory.appendingPathComponent(name), []) }))
                }
                async let firstCall = provider.request(target("first.txt"))
                async let secondCall = provider.request(target("second.txt"))
                let (first, second) = try await (firstCall, secondCall)
                #expect(provider.endpoint(target("first.txt")) == provider.endpoint(target("second.txt")))
                #expect(server.statistics.requestsReceived == 2)
                #expect(first.fileURL == directory.appendingPathComponent("first.txt"))
                #expect(second.fileURL == directory.appendingPathComponent("second.txt"))
                let texts = Set([try first.mapString(), try second.mapString()])
                #expect(texts == ["answer 1", "answer 2"])
                #expect(entries(directory) == ["first.txt", "second.txt"])
                #expect(await provider.inflightCount == 0)
            }
        }
    }

    /// Two identical uploads at the same time (a file, and a form) each send their own body.
    @Test func identicalConcurrentUploadsAreNotShared() async throws {
        let arrivals = Locked<[String: Int]>([:])
        let handler: LocalHTTPServer.Handler = { request in
            arrivals.withLock { $0[request.path, default: 0] += 1 }
            _ = await eventually(within: 10) { arrivals.withLock { $0[request.path] ?? 0 } >= 2 }
            return .text("\(request.method) \(request.body.count)")
        }
        try await withDirectory { directory in
            let file = try makeFile(directory, "upload.bin", String(repeating: "x", count: 5000))
            try await withServer(handler) { server, session in
                let provider = Provider<Moya>(session: session, trackInflights: true)
                let fileTarget = Moya(base: server.baseURL, path: "/file", method: .put, task: .uploadFile(file))
                let form = MultipartFormData(parts: twoParts, boundary: "same-boundary")
                let formTarget = Moya(base: server.baseURL, path: "/form", method: .post, task: .uploadMultipart(form))
                async let a = provider.request(fileTarget)
                async let b = provider.request(fileTarget)
                async let c = provider.request(formTarget)
                async let d = provider.request(formTarget)
                let texts = try await [a, b, c, d].map { try $0.mapString() }
                let formLength = twoPartBody("same-boundary").count
                #expect(texts == ["PUT 5000", "PUT 5000", "POST \(formLength)", "POST \(formLength)"])
                #expect(server.statistics.requestsReceived == 4)
                #expect(server.requests.filter { $0.path == "/form" }.map { Data($0.body) } == [twoPartBody("same-boundary"), twoPartBody("same-boundary")])
            }
        }
    }

    // MARK: URL(target:), endpoint(_:), result(for:)

    /// `URL(target:)` is the URL the default endpoint builds, as Moya's `URL(target:)` is.
    @Test(arguments: [
        ("https://api.example.com", "/users/octocat", "https://api.example.com/users/octocat"),
        ("https://api.example.com/v1/", "/users", "https://api.example.com/v1/users"),
        ("https://api.example.com/v1", "users", "https://api.example.com/v1/users"),
        ("https://api.example.com/v1", "", "https://api.example.com/v1"),
        ("https://api.example.com", "/search me?now#here", "https://api.example.com/search%20me%3Fnow%23here"),
        ("https://api.example.com/v1?key=k", "/items", "https://api.example.com/v1/items?key=k"),
        ("https://api.example.com", "/caf%C3%A9/crème", "https://api.example.com/caf%C3%A9/cr%C3%A8me"),
    ])
    func urlOfATargetIsTheDefaultEndpointsURL(base: String, path: String, expected: String) {
        let target = Moya(base: base, path: path)
        #expect(Endpoint.defaultURL(for: target) == expected)
        #expect(URL(target: target).absoluteString == expected)
        #expect(URL(target: target).absoluteString == Endpoint.defaultURL(for: target))
        #expect(URL(target: MultiTarget(target)).absoluteString == expected)
    }

    /// `provider.endpoint(_:)` is the endpoint closure's endpoint.
    @Test func endpointOfAProviderUsesItsEndpointClosure() throws {
        let calls = Locked(0)
        let provider = Provider<Moya>(endpointClosure: { target in
            calls.withLock { $0 += 1 }
            return Endpoint.default(for: target).adding(newHTTPHeaderFields: ["X-Closure": "yes"])
                .replacing(task: .downloadDestination(unusedDestination("closure")))
        })
        let made = provider.endpoint(Moya(base: "https://api.example.com", path: "/report"))
        #expect(calls.withLock { $0 } == 1)
        #expect(made.url == "https://api.example.com/report")
        #expect(made.httpHeaderFields == ["X-Closure": "yes"])
        guard case .downloadDestination = made.task else {
            Issue.record("expected the closure's task, got \(made.task)")
            return
        }
        #expect(made == Endpoint.default(for: Moya(base: "https://api.example.com", path: "/report"))
            .adding(newHTTPHeaderFields: ["X-Closure": "yes"]).replacing(task: .downloadDestination(unusedDestination("other"))))
    }

    /// `result(for:)` returns success and failure as a Result, never throwing: a response, a download, a
    /// validation failure and a transport failure.
    @Test func resultForATargetIsAResult() async throws {
        let handler: LocalHTTPServer.Handler = { request in
            request.path == "/missing" ? .json(#"{"error_message":"Not Found"}"#, status: 404) : .text("fine \(request.path)")
        }
        try await withDirectory { directory in
            try await withServer(handler) { server, session async throws in
                let provider = Provider<Moya>(session: session)
                guard case .success(let plain) = await provider.result(for: Moya(base: server.baseURL, path: "/plain")) else {
                    Issue.record("expected success")
                    return
                }
                #expect(try plain.mapString() == "fine /plain")

                let file = directory.appendingPathComponent("out.txt")
                let download = Moya(base: server.baseURL, path: "/file", task: .downloadDestination(DownloadDestination { _, _ in (file, []) }))
                guard case .success(let downloaded) = await provider.result(for: download) else {
                    Issue.record("expected success")
                    return
                }
                #expect(downloaded.fileURL == file)
                #expect(try downloaded.mapString() == "fine /file")

                var validated = Moya(base: server.baseURL, path: "/missing")
                validated.validationType = .successCodes
                guard case .failure(.statusCode(let refused)) = await provider.result(for: validated) else {
                    Issue.record("expected failure(.statusCode)")
                    return
                }
                #expect(refused.statusCode == 404)
            }
        }
        let outcome = await withRefusingPort { port in
            await Provider<Moya>().result(for: Moya(base: "http://127.0.0.1:\(port)", path: "/gone"))
        }
        guard case .failure(.transport(let failure)) = outcome else {
            Issue.record("expected failure(.transport), got \(outcome)")
            return
        }
        #expect(failure.code == .cannotConnect)
    }

    // MARK: MultiTarget

    /// MultiTarget forwards the wrapped target's download options, and a provider of MultiTarget keeps
    /// the partial file they ask for and resumes from the resume data they carry.
    @Test func multiTargetForwardsDownloadOptions() async throws {
        try await withDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let file = directory.appendingPathComponent("out.bin")
                let key = UUID().uuidString
                var target = Moya(
                    base: "http://127.0.0.1:\(server.port)?n=200000&etag=v1&key=\(key)&cut=70000&then-cut=", path: "/file",
                    task: .downloadDestination(DownloadDestination { _, _ in (file, [.removePreviousFile]) }))
                target.downloadOptions = DownloadOptions(keepsPartialFile: true, syncsBeforeMove: true)
                let multi = MultiTarget(target)
                #expect(multi.downloadOptions.keepsPartialFile)
                #expect(multi.downloadOptions.syncsBeforeMove)
                #expect(multi.downloadOptions.resumeData == nil)
                #expect(!MultiTarget(Moya(base: "https://example.com", path: "/")).downloadOptions.keepsPartialFile)

                let provider = Provider<MultiTarget>(session: session)
                let error = await curlewError { try await provider.request(multi) }
                guard case .transport(let failure) = error else {
                    Issue.record("expected transport, got \(String(describing: error))")
                    return
                }
                let resumeData = try #require(failure.resumeData)
                #expect(resumeData.byteCount == 70_000)
                #expect(entries(directory) == [URL(fileURLWithPath: resumeData.partialFilePath).lastPathComponent])

                target.downloadOptions = DownloadOptions(resumeData: resumeData)
                #expect(MultiTarget(target).downloadOptions.resumeData == resumeData)
                let resumed = try await provider.request(MultiTarget(target))
                #expect(resumed.statusCode == 206)
                #expect(resumed.download?.resumedFrom == 70_000)
                #expect(resumed.download?.fileSize == 200_000)
                #expect(FileManager.default.contents(atPath: file.path).map { [UInt8]($0) } == streamPattern(count: 200_000))
                #expect(entries(directory) == ["out.bin"])
            }
        }
    }
}

@Suite struct TransferLoggingTests {
    /// The logger's curl line names a form it cannot put on the command line, in a trailing comment; a
    /// file upload is given as `@file`.
    @Test func theCurlLineOfAFormWithAFileSaysItsBodyIsNotShown() async throws {
        try await withDirectory { directory in
            let file = try makeFile(directory, "photo.png", "png")
            let form = MultipartFormData(
                parts: [
                    MultipartFormBodyPart(provider: .data(Data("A sunset".utf8)), name: "caption"),
                    MultipartFormBodyPart(provider: .file(file), name: "photo"),
                ], boundary: "fixed")
            let logger = NetworkLoggerPlugin()
            let formLine = logger.curlCommand(for: try endpoint(.uploadMultipart(form), headers: nil).urlRequest())
            let path = file.path(percentEncoded: false)
            #expect(
                formLine
                    == "curl -X POST -H 'Content-Type: multipart/form-data; boundary=fixed' 'https://api.example.com/upload' "
                    + "# body not shown: 186 bytes in memory and 1 file (3 bytes: \(path))")
            let fileLine = logger.curlCommand(for: try endpoint(.uploadFile(file), headers: nil).urlRequest())
            #expect(fileLine == "curl -X POST --data-binary '@\(path)' 'https://api.example.com/upload'")
        }
    }
}
