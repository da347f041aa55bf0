// Curlew — a target's progress through the provider, against LocalHTTPServer on loopback: the same stages
// as `request`, the last element carrying the ApiResponse, failures thrown as CurlewError, and a target's
// request compression reaching the wire (checked by stream_server.py).

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

/// 200 KB in 20 pieces of 10,000 bytes, 50 ms apart, with Content-Length.
private let drippedBody = ServerReply.drip(
    head: Array("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 200000\r\n\r\n".utf8),
    chunk: [UInt8](repeating: 0x41, count: 10_000), interval: .milliseconds(50), count: 20, after: .keepOpen)

/// Iterates a provider's progress to the end.
private func collect(_ updates: ProgressUpdates<ApiResponse, CurlewError>) async throws(CurlewError) -> [ProgressUpdate<ApiResponse>] {
    var received: [ProgressUpdate<ApiResponse>] = []
    for try await update in updates { received.append(update) }
    return received
}

/// Expects the progress iteration to throw a CurlewError and returns it.
private func progressError(
    _ updates: ProgressUpdates<ApiResponse, CurlewError>, sourceLocation: SourceLocation = #_sourceLocation
) async -> (error: CurlewError?, updates: [ProgressUpdate<ApiResponse>]) {
    var received: [ProgressUpdate<ApiResponse>] = []
    do {
        for try await update in updates { received.append(update) }
        Issue.record("expected a CurlewError, the progress completed", sourceLocation: sourceLocation)
        return (nil, received)
    } catch {
        return (error, received)
    }
}

/// A target that uploads bytes compressed as its transfer options say.
private struct CompressedUpload: TargetType {
    let base: String
    let payload: Data
    let compression: RequestCompression

    var baseURL: URL { URL(string: base) ?? URL(fileURLWithPath: "/") }
    var path: String { "/inflate" }
    var method: HTTPRequest.Method { .post }
    var task: RequestTask { .requestData(payload) }
    var headers: [String: String]? { nil }
    var sampleData: Data { Data() }
    var transferOptions: TransferOptions { TransferOptions(requestCompression: compression) }
}

@Suite struct ProviderProgressTests {
    @Test func theProgressEndsWithTheApiResponseAfterThePlugins() async throws {
        try await withServer({ _ in drippedBody }) { server, session in
            let recorder = Recorder()
            let provider = Provider<Local>(session: session, plugins: [RecordingPlugin(name: "p", recorder: recorder)])
            let received = try await collect(provider.progress(for: Local(server, "/export")))
            #expect(received.count >= 3)
            #expect(received.dropLast().allSatisfy { $0.response == nil && !$0.progress.isCompleted })
            for (previous, next) in zip(received, received.dropFirst()) {
                #expect(next.progress.bytesReceived >= previous.progress.bytesReceived)
                #expect(next.progress.fractionCompleted >= previous.progress.fractionCompleted)
            }
            let last = try #require(received.last)
            #expect(last.progress.isCompleted)
            #expect(last.progress.fractionCompleted == 1)
            #expect(last.progress.bytesReceived == 200_000)
            #expect(last.progress.expectedBytesToReceive == 200_000)
            let response = try #require(last.response)
            #expect(response.statusCode == 200)
            #expect(response.data == Data(repeating: 0x41, count: 200_000))
            #expect(recorder.all == ["p.prepare", "p.willSend", "p.didReceive(200)", "p.process"])
            #expect(server.requests.last?.header("X-Plugin-p") == "yes")
        }
    }

    /// A response keeps its request, whose options keep the call's progress reporter: once the caller lets
    /// go of the response, nothing of the call may stay alive (the reporter held the iteration's channel,
    /// which held the last update and its response: a cycle that kept every response).
    @Test(arguments: [200, 503]) func aFinishedProgressCallKeepsNothingAlive(status: Int) async throws {
        try await withServer({ _ in .respond(status: status, headers: [], body: Array("done".utf8)) }) { server, session in
            let provider = Provider<Local>(session: session)
            var target = Local(server, "/export")
            target.validationType = .successCodes
            weak var reporter: ProgressReporter?
            do {
                let response: ApiResponse
                if status == 200 {
                    response = try #require(try await collect(provider.progress(for: target)).last?.response)
                } else {
                    guard case .statusCode(let failed) = await progressError(provider.progress(for: target)).error else {
                        Issue.record("expected a status-code failure")
                        return
                    }
                    response = failed
                }
                #expect(response.statusCode == status)
                #expect(response.data == Data("done".utf8))
                reporter = response.request?.options.progressReporter
                #expect(reporter != nil)
            }
            // The call's task may still be returning when the last element arrives.
            #expect(await eventually(within: 5) { reporter == nil })
        }
    }

    @Test func aTransportFailureIsThrownAsCurlewError() async throws {
        let server = try await LocalHTTPServer.start { _ in .text("unused") }
        var target = try await server.withShutdown { Local($0, "/gone") }
        // A port that stays refused: another test's server could take the shut-down server's port.
        await withRefusingPort { port in
            target.base = "http://127.0.0.1:\(port)"
            let recorder = Recorder()
            let provider = Provider<Local>(plugins: [RecordingPlugin(name: "p", recorder: recorder)])
            let (error, updates) = await progressError(provider.progress(for: target))
            guard case .transport(let transport) = error else {
                Issue.record("expected a transport failure, got \(String(describing: error))")
                return
            }
            #expect(transport.code == .cannotConnect)
            #expect(updates.allSatisfy { !$0.progress.isCompleted && $0.response == nil && $0.progress.bytesReceived == 0 })
            #expect(recorder.all == ["p.prepare", "p.willSend", "p.didReceive(error)", "p.process"])
        }
    }

    @Test func aStatusTheTargetDoesNotAcceptIsThrownAsStatusCode() async throws {
        try await withServer({ _ in .respond(status: 503, headers: [], body: Array("busy".utf8)) }) { server, session in
            let provider = Provider<Local>(session: session)
            var target = Local(server, "/export")
            target.validationType = .successCodes
            let (error, updates) = await progressError(provider.progress(for: target))
            #expect(updates.allSatisfy { !$0.progress.isCompleted && $0.response == nil })
            guard case .statusCode(let response) = error else {
                Issue.record("expected a status-code failure, got \(String(describing: error))")
                return
            }
            #expect(response.statusCode == 503)
            #expect(response.data == Data("busy".utf8))
        }
    }

    /// A target's transfer options compress its body: stream_server.py's `/inflate` gets gzip that decodes
    /// to the payload, and the upload's progress counts the compressed bytes sent.
    @Test func aTargetsRequestCompressionReachesTheWire() async throws {
        let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: ($0 / 100) % 7 + 97) })
        try await withStreamServerAndSession(.http1) { server, session in
            let plain = try await session.execute(TransportRequest(url: server.url("/inflate"), method: .post, body: .data(payload)))
            let expected = try JSONDecoder().decode(Inflated.self, from: plain.body)
            let provider = Provider<CompressedUpload>(session: session)
            let received = try await collect(
                provider.progress(for: CompressedUpload(base: "http://127.0.0.1:\(server.port)", payload: payload, compression: .gzip())))
            let response = try #require(received.last?.response)
            #expect(response.statusCode == 200)
            let report = try JSONDecoder().decode(Inflated.self, from: response.data)
            #expect(report.contentEncoding == "gzip")
            #expect(report.complete)
            #expect(report.decodedLength == payload.count)
            #expect(report.sha256 == expected.sha256)
            #expect(report.contentLength == report.wireLength)
            #expect(report.wireLength < payload.count / 10)
            #expect(received.last?.progress.bytesSent == report.wireLength)
        }
    }
}

/// What stream_server.py's `/inflate` reports.
private struct Inflated: Decodable {
    let contentEncoding: String?
    let contentLength: Int?
    let wireLength: Int
    let decodedLength: Int
    let sha256: String
    let complete: Bool

    enum CodingKeys: String, CodingKey {
        case sha256, complete
        case contentEncoding = "content_encoding"
        case contentLength = "content_length"
        case wireLength = "wire_length"
        case decodedLength = "decoded_length"
    }
}
