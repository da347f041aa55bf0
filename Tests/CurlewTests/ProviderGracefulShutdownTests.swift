// Curlew — a provider whose session shuts down gracefully: its event stream ends at once without
// reconnecting, and its requests are refused with the typed error.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import Testing

/// One path of a loopback server.
private struct LoopbackTarget: TargetType {
    let base: String
    let path: String

    var baseURL: URL { URL(string: base) ?? URL(fileURLWithPath: "/") }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}

@Suite struct ProviderGracefulShutdownTests {
    @Test(.timeLimit(.minutes(1)))
    func aProvidersEventStreamEndsAtOnceAndItsRequestsAreRefused() async throws {
        let server = try await LocalHTTPServer.start { _ in
            .drip(
                head: Array("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n".utf8), chunk: Array("data: tick\n\n".utf8),
                interval: .milliseconds(20), count: 1_000_000, after: .keepOpen)
        }
        let session = try CurlSession()
        let provider = Provider<LoopbackTarget>(session: session)
        let events = provider.events(for: LoopbackTarget(base: server.baseURL, path: "/ticks"))
        let first = Gate()
        let reading = Task { () -> String in
            do {
                for try await _ in events { first.open() }
                return "ended"
            } catch {
                guard case .eventStream(.transport(let transport))? = error as? CurlewError else { return "\(error)" }
                return "\(transport.code): \(transport.message)"
            }
        }
        await first.wait()
        // Far beyond the test's time limit: a stream left running would keep the shutdown waiting.
        await session.shutdownGracefully(within: .seconds(600))
        #expect(await reading.value == "sessionShutDown: the session is shutting down gracefully: event streams end at once")
        #expect(server.statistics.requestsReceived == 1)

        let refused: String
        do {
            _ = try await provider.request(LoopbackTarget(base: server.baseURL, path: "/after"))
            refused = "answered"
        } catch {
            guard case .transport(let transport) = error else { throw error }
            refused = "\(transport.code): \(transport.message)"
        }
        #expect(refused == "sessionShutDown: the session was shut down")
        #expect(server.statistics.requestsReceived == 1)
        try await server.shutdown()
    }
}
