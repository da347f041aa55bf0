// Curlew — the shape of a target's progress through `Provider.progress(for:)`, against stream_server.py
// holding its bodies until the test has seen each update (ordered by events, not time): Moya's figures for
// a chunked download, an upload task's fraction following its body before the response head, and a data
// task's following the response.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

/// A route of `stream_server.py` with `query` as a target (the base URL's query stays after the path).
private struct Held: TargetType {
    /// `http(s)://127.0.0.1:PORT`.
    let root: String
    let path: String
    let query: String
    var method: HTTPRequest.Method = .get
    var task: RequestTask = .requestPlain
    var headers: [String: String]? { nil }

    init(_ server: StreamTestServer, _ path: String, _ query: String) {
        root = String(server.url("/").dropLast())
        self.path = path
        self.query = query
    }

    var baseURL: URL { URL(string: root + "/?" + query) ?? URL(fileURLWithPath: "/") }
}

/// Lets `stream_server.py` go on with what waits on `key` (`/hold`, or a chunk of `/steps`).
private func release(_ key: String, _ server: StreamTestServer, _ session: CurlSession) async throws {
    _ = try await session.execute(TransportRequest(url: server.url("/release?key=\(key)")))
}

/// Reads `target`'s progress through a provider; the first update before the head with 1 MB sent is kept,
/// and only then does `/hold` (keyed `key`) read the rest.
private func progressReleasedAfterOneMegabyte(
    of target: Held, key: String, _ server: StreamTestServer, _ session: CurlSession
) async throws -> (seen: [TransferProgress], beforeHead: TransferProgress?, last: ProgressUpdate<ApiResponse>?) {
    let provider = Provider<Held>(session: session)
    var seen: [TransferProgress] = []
    var beforeHead: TransferProgress?
    var last: ProgressUpdate<ApiResponse>?
    for try await update in provider.progress(for: target) {
        seen.append(update.progress)
        last = update
        let progress = update.progress
        if beforeHead == nil, !progress.isCompleted, progress.expectedBytesToReceive == nil, progress.bytesSent >= 1_000_000 {
            beforeHead = progress
            try await release(key, server, session)
        }
    }
    return (seen, beforeHead, last)
}

/// What `/hold` answers.
private struct HoldReport: Decodable {
    let received: Int
}

@Suite struct ProviderProgressSequenceTests {
    /// Moya's expectation for four 1,000-byte chunks of a 4,000-byte body: one update per chunk (none
    /// before a byte moves, the last chunk not folded into the completion), then the completed one with
    /// the response. Each chunk leaves the server only once the test has seen the one before; in memory
    /// and as a download task.
    @Test(arguments: Wire.allCases, [false, true])
    func aTargetsDownloadReportsEachChunkThenCompletes(wire: Wire, toFile: Bool) async throws {
        try await withMultipartDirectory { directory in
            try await withStreamServerAndSession(wire) { server, session in
                let key = UUID().uuidString
                let destination = URL(fileURLWithPath: directory).appendingPathComponent("steps.bin")
                var target = Held(server, "/steps", "key=\(key)&chunks=4&size=1000")
                if toFile { target.task = .downloadDestination { _, _ in (destination, []) } }
                let provider = Provider<Held>(session: session)
                var seen: [ProgressUpdate<ApiResponse>] = []
                do {
                    for try await update in provider.progress(for: target) {
                        seen.append(update)
                        let chunk = update.progress.bytesReceived / 1000
                        if !update.progress.isCompleted, chunk < 4 { try await release("\(key)-\(chunk + 1)", server, session) }
                    }
                } catch {
                    // The updates seen say which one never came (the server waits for its release).
                    Issue.record("\(error); updates seen: \(seen.map(\.progress))")
                    return
                }
                let progress = seen.map(\.progress)
                #expect(progress.map(\.fractionCompleted) == [0.25, 0.5, 0.75, 1.0, 1.0], "\(progress)")
                #expect(progress.map(\.bytesReceived) == [1000, 2000, 3000, 4000, 4000])
                #expect(progress.map(\.expectedBytesToReceive) == Array(repeating: Optional(4000), count: 5))
                #expect(progress.map(\.isCompleted) == [false, false, false, false, true])
                #expect(seen.map { $0.response != nil } == [false, false, false, false, true])
                let response = try #require(seen.last?.response)
                #expect(response.statusCode == 200)
                if toFile {
                    #expect(response.fileURL == destination)
                    #expect(try [UInt8](Data(contentsOf: destination)) == streamPattern(count: 4000))
                } else {
                    #expect([UInt8](response.data) == streamPattern(count: 4000))
                }
            }
        }
    }

    /// An upload task's fraction follows its request body before the response head (as Moya reads
    /// `uploadProgress` for it): the server reads 1 MB of the 4 MB file and holds the rest until the test
    /// has seen an update, with no head yet, whose fraction is the part sent.
    @Test func anUploadTasksFractionFollowsItsBodyBeforeTheHead() async throws {
        let size = 4_000_000
        try await withMultipartDirectory { directory in
            let file = try writeMultipartFile(streamPattern(count: size), "upload.bin", in: directory)
            try await withStreamServerAndSession(.http1) { server, session in
                let key = UUID().uuidString
                var target = Held(server, "/hold", "key=\(key)&after=1000000")
                target.method = .post
                target.task = .uploadFile(file)
                let (seen, beforeHead, last) = try await progressReleasedAfterOneMegabyte(of: target, key: key, server, session)
                let held = try #require(beforeHead, "\(seen)")
                #expect(held.expectedBytesToSend == size)
                #expect(held.fractionCompleted == Double(held.bytesSent) / Double(size))
                #expect(held.fractionCompleted > 0)
                #expect(seen.allSatisfy { $0.bytesSent + $0.bytesReceived > 0 })
                #expect(seen.last?.isCompleted == true)
                #expect(seen.last?.fractionCompleted == 1)
                #expect(seen.last?.bytesSent == size)
                let response = try #require(last?.response)
                #expect(response.statusCode == 200)
                #expect(try JSONDecoder().decode(HoldReport.self, from: response.data).received == size)
            }
        }
    }

    /// A task that is not an upload task follows the response body, as Moya reads `downloadProgress` for
    /// it: the same 4 MB sent as data leaves the fraction at 0 until the head, though the bytes sent rise.
    @Test func aDataTasksFractionFollowsTheResponseBody() async throws {
        let size = 4_000_000
        try await withStreamServerAndSession(.http1) { server, session in
            let key = UUID().uuidString
            var target = Held(server, "/hold", "key=\(key)&after=1000000")
            target.method = .post
            target.task = .requestData(Data(streamPattern(count: size)))
            let (seen, beforeHead, _) = try await progressReleasedAfterOneMegabyte(of: target, key: key, server, session)
            let held = try #require(beforeHead, "\(seen)")
            #expect(held.expectedBytesToSend == size)
            #expect(held.fractionCompleted == 0)
            #expect(seen.last?.isCompleted == true)
            #expect(seen.last?.fractionCompleted == 1)
            #expect(seen.last?.bytesSent == size)
        }
    }
}
