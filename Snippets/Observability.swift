// Observability and shutdown: a session of the service's own, its metrics and spans, and graceful shutdown
// with the service group.

// snippet.hide
import Curlew
import CurlewServiceLifecycle
import CurlewTesting
import Foundation
import Logging
import ServiceLifecycle

let upstream = try await LocalHTTPServer.start { request in .json(#"{"status":"green"}"#) }

enum Upstream: TargetType {
    case health

    var baseURL: URL { URL(string: upstream.baseURL)! }
    var path: String { "/health" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}
// snippet.show

// At startup, first: LoggingSystem.bootstrap(...), MetricsSystem.bootstrap(...) and
// InstrumentationSystem.bootstrap(...) with the backends the service uses (swift-otel, Prometheus...).
// A session reads them when it is created; with none bootstrapped it records nothing.
var logger = Logger(label: "upstream")
logger.logLevel = .info  // .debug logs every request sent, with its id and redacted URL

var configuration = SessionConfiguration()
configuration.gracefulShutdownTimeout = .seconds(5)
// The service's own session, stopped with its group (never `CurlSession.shared`, which the process keeps).
let session = try CurlSession(configuration: configuration)
let api = Provider<Upstream>(session: session, logger: logger)

/// The service's own work: here, one call, then it waits for the group to shut down.
struct HealthReporter: Service {
    let api: Provider<Upstream>

    func run() async throws {
        let response = try await api.request(.health)
        print("upstream answered \(response.statusCode)")
        try? await gracefulShutdown()
    }
}

// Services stop in reverse order: the reporter first, then the session, whose calls in flight may finish.
let group = ServiceGroup(
    configuration: .init(services: [session, HealthReporter(api: api)], gracefulShutdownSignals: [.sigterm], logger: logger))
// snippet.hide
let running = Task { try await group.run() }
while upstream.requests.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
await group.triggerGracefulShutdown()
try await running.value
// snippet.show

// After the group's graceful shutdown the session refuses new calls at once, typed.
func callAfterShutdown() async {
    do {
        _ = try await api.request(.health)
    } catch {
        if case .transport(let failure) = error { print("refused: \(failure.code)") }  // sessionShutDown
    }
}
await callAfterShutdown()
// snippet.hide
try await upstream.shutdown()
// snippet.show
