// Curlew — a target's response read as it arrives through the provider: the same stages as `request`,
// validation and plugins on the head, stubs streaming their sample data.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Logging
import Testing

/// Collects a body's bytes and how many chunks they came in.
private func collect(_ body: ResponseBodyStream) async throws -> (text: String, chunks: Int) {
    var bytes: [UInt8] = []
    var chunks = 0
    for try await chunk in body {
        bytes += chunk
        chunks += 1
    }
    return (String(decoding: bytes, as: UTF8.self), chunks)
}

/// Turns every failure into a fixed response (a fallback).
private struct FallbackPlugin: PluginType {
    func process(_ result: Result<ApiResponse, CurlewError>, target: any TargetType) async -> Result<ApiResponse, CurlewError> {
        guard case .failure = result else { return result }
        return .success(ApiResponse(statusCode: 299, data: Data("fallback".utf8)))
    }
}

@Suite struct ProviderStreamTests {
    @Test func theStagesRunOnTheHeadAndTheHandlerReadsTheBody() async throws {
        let body = String(repeating: "0123456789", count: 50_000)
        try await withServer({ _ in .text(body) }) { server, session in
            let recorder = Recorder()
            let provider = Provider<Local>(session: session, plugins: [RecordingPlugin(name: "p", recorder: recorder)])
            let (seen, text) = try await provider.stream(Local(server, "/export")) { response, body in
                (response, try await collect(body).text)
            }
            #expect(text == body)
            #expect(seen.statusCode == 200)
            #expect(seen.isStreamed)
            #expect(seen.data.isEmpty)
            #expect(seen.headerFields[.contentLength] == "500000")
            #expect(seen.finalURL == server.url("/export"))
            #expect(recorder.all == ["p.prepare", "p.willSend", "p.didReceive(200)", "p.process"])
            // The plugin's field was sent, and a streamed request offers the codings its reader decodes.
            #expect(server.requests.last?.header("X-Plugin-p") == "yes")
            #expect(server.requests.last?.header("Accept-Encoding") == "deflate, gzip")
        }
    }

    @Test func validationFailsOnTheHeadWithoutRunningTheHandler() async throws {
        try await withServer({ _ in .respond(status: 503, headers: [], body: Array("busy".utf8)) }) { server, session in
            let recorder = Recorder()
            let provider = Provider<Local>(session: session, plugins: [RecordingPlugin(name: "p", recorder: recorder)])
            var target = Local(server, "/export")
            target.validationType = .successCodes
            let ran = Recorder()
            let error = await curlewError {
                try await provider.stream(target) { _, _ in ran.add("handler") }
            }
            guard case .statusCode(let response) = error else {
                Issue.record("expected a status-code failure, got \(String(describing: error))")
                return
            }
            #expect(response.statusCode == 503)
            #expect(response.isStreamed)
            #expect(ran.all.isEmpty)
            #expect(recorder.all == ["p.prepare", "p.willSend", "p.didReceive(error)", "p.process"])
        }
    }

    @Test func aStubbedTargetStreamsItsSampleData() async throws {
        let recorder = Recorder()
        let provider = Provider<GitHub>(stubClosure: Provider.immediatelyStub, plugins: [RecordingPlugin(name: "p", recorder: recorder)])
        let (response, text) = try await provider.stream(.zen) { response, body in (response, try await collect(body).text) }
        #expect(text == "Half measures are as bad as nothing at all.")
        #expect(response.statusCode == 200)
        #expect(response.isStreamed)
        #expect(recorder.all == ["p.prepare", "p.willSend", "p.didReceive(200)", "p.process"])
    }

    @Test func aTransportFailureBeforeTheHeadReachesThePluginsAndIsThrown() async throws {
        let server = try await LocalHTTPServer.start { _ in .text("unused") }
        var target = try await server.withShutdown { Local($0, "/gone") }
        // A port that stays refused: another test's server could take the shut-down server's port.
        await withRefusingPort { port in
            target.base = "http://127.0.0.1:\(port)"
            let recorder = Recorder()
            let provider = Provider<Local>(plugins: [RecordingPlugin(name: "p", recorder: recorder)])
            let error = await curlewError { try await provider.stream(target) { _, _ in } }
            guard case .transport(let transport) = error else {
                Issue.record("expected a transport failure, got \(String(describing: error))")
                return
            }
            #expect(transport.code == .cannotConnect)
            #expect(recorder.all == ["p.prepare", "p.willSend", "p.didReceive(error)", "p.process"])
        }
    }

    @Test func aPluginThatReplacesAFailureHandsItsResponseAndDataToTheHandler() async throws {
        let server = try await LocalHTTPServer.start { _ in .text("unused") }
        var target = try await server.withShutdown { Local($0, "/gone") }
        // A port that stays refused: another test's server could take the shut-down server's port.
        try await withRefusingPort { port in
            target.base = "http://127.0.0.1:\(port)"
            let provider = Provider<Local>(plugins: [FallbackPlugin()])
            let (status, text) = try await provider.stream(target) { response, body in (response.statusCode, try await collect(body).text) }
            #expect(status == 299)
            #expect(text == "fallback")
        }
    }

    @Test func aTransportThatDoesNotStreamStillServesStreamingCallers() async throws {
        let transport = MockTransport(replies: [.status(200, body: "from the mock")])
        let provider = Provider<GitHub>(session: transport)
        let text = try await provider.stream(.zen) { _, body in try await collect(body).text }
        #expect(text == "from the mock")
        #expect(transport.requests.map(\.url) == ["https://api.github.com/zen"])
    }

    @Test func theLoggerMarksAStreamedResponse() async throws {
        try await withServer({ _ in .text("streamed body") }) { server, session in
            let lines = Recorder()
            let logger = Logger(label: "test") { _ in CapturingLogHandler(store: lines) }
            let plugin = NetworkLoggerPlugin(configuration: .init(logger: logger, logOptions: [.requestMethod, .successResponseBody]))
            let provider = Provider<Local>(session: session, plugins: [plugin])
            _ = try await provider.stream(Local(server, "/s")) { _, body in try await collect(body) }
            #expect(lines.all == ["info: Request: GET \(server.url("/s"))", "info: Response: 200 for \(server.url("/s")) (streamed)"])
        }
    }

    @Test func leavingTheHandlerEarlyAbortsTheTransfer() async throws {
        let big = [UInt8](repeating: 65, count: 20_000_000)
        try await withServer({ _ in .respond(status: 200, headers: [], body: big) }) { server, session in
            let provider = Provider<Local>(session: session)
            let first = try await provider.stream(Local(server, "/big")) { _, body in
                var iterator = body.makeAsyncIterator()
                return try await iterator.next()?.count ?? 0
            }
            #expect(first > 0)
            #expect(await eventually { session.statistics.activeTransfers == 0 && session.statistics.openConnections == 0 })
            #expect(session.statistics.cancelledTransfers == 1)
        }
    }
}
