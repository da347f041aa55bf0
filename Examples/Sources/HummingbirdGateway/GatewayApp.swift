// The service: one session, one provider, a Hummingbird server, and a service group that runs and
// stops them.

import Curlew
import CurlewServiceLifecycle
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import UnixSignals

/// A Hummingbird 2 service that answers its routes by calling an upstream JSON API through Curlew.
///
/// One ``/CurlewEngine/CurlSession`` and one `Provider` serve every request. The session and the HTTP
/// server run in one `ServiceGroup`, which SIGTERM and SIGINT shut down gracefully: the server stops
/// accepting connections and finishes the requests in flight, then the session stops. Requests still
/// running after `SHUTDOWN_GRACE` seconds are cancelled.
@main
struct GatewayApp {
    static func main() async {
        var logger = Logger(label: "gateway")
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration(environment: ProcessInfo.processInfo.environment)
        } catch {
            logger.critical("Bad configuration: \(error)")
            exit(EXIT_FAILURE)
        }
        logger.logLevel = configuration.logLevel

        // The app's own session, stopped by the group (the process-wide `CurlSession.shared` never is).
        var sessionConfiguration = SessionConfiguration()
        sessionConfiguration.totalTimeout = configuration.upstreamTimeout
        var sessionLogger = Logger(label: "gateway.upstream")
        sessionLogger.logLevel = configuration.logLevel
        let session: CurlSession
        do {
            session = try CurlSession(configuration: sessionConfiguration, logger: sessionLogger)
        } catch {
            logger.critical("Cannot start the HTTP client: \(error)")
            exit(EXIT_FAILURE)
        }

        // One provider for the app: the upstream's address from configuration, the app's session.
        let api = Provider<UpstreamAPI>(baseURL: configuration.upstreamURL, session: session, logger: sessionLogger)

        let router = Router(context: GatewayRequestContext.self)
        router.add(middleware: LogRequestsMiddleware(.info))
        GatewayRoutes(api: api).register(on: router)
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "curlew-gateway"),
            logger: logger)

        // A group stops its services in reverse order: the server first (it stops accepting and lets
        // requests in flight finish, still calling the upstream), then the session.
        var groupConfiguration = ServiceGroupConfiguration(
            services: [session, app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // After this, everything still running is cancelled.
        groupConfiguration.maximumGracefulShutdownDuration = configuration.shutdownGrace
        do {
            try await ServiceGroup(configuration: groupConfiguration).run()
        } catch {
            logger.critical("Stopped on an error: \(error)")
            exit(EXIT_FAILURE)
        }
    }
}
