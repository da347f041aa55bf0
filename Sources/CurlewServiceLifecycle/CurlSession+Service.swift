// Curlew — a session as a swift-service-lifecycle Service: stopped gracefully with its group.

public import CurlewEngine
public import ServiceLifecycle

/// A session runs as a service of a `ServiceGroup`: it serves requests until the group shuts down, then
/// stops gracefully.
///
/// Give each service group a session of its own, made for it, and list it before the services that use
/// it: a group stops its services in reverse order, so they stop calling first. The process-wide default
/// session (`CurlSession.shared`, which a provider uses when it is given no session) is never stopped by
/// one service's group, since other code in the process may still be using it: run as a service, it only
/// waits for the group to shut down.
///
/// ```swift
/// let session = try CurlSession(configuration: configuration)
/// let api = Provider<GitHub>(session: session)
/// let group = ServiceGroup(
///     configuration: .init(services: [session, MyServer(api: api)], logger: logger))
/// try await group.run()
/// ```
extension CurlSession: Service {
    /// Serves requests until the group's graceful shutdown, then stops the session gracefully (see
    /// `shutdownGracefully(within:)`: requests in flight may finish within the configuration's
    /// `gracefulShutdownTimeout`, new ones are refused at once); returns once the session has stopped
    /// and released everything. Cancelling the service stops the session at once, as `shutdown()` does.
    /// The process-wide default session is left running.
    public func run() async throws {
        guard !isProcessDefault else {
            // Not this group's to stop: wait for the group, then let the process keep it.
            try? await gracefulShutdown()
            return
        }
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled before the group shut down gracefully.
            await shutdown()
            return
        }
        // Cancelled from here on (the group's own deadline), this stops at once.
        await shutdownGracefully()
    }
}
