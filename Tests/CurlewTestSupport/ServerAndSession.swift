// Curlew — a loopback HTTP/1.1 server and an engine session for one test, always stopped after it.

import CurlewEngine
import CurlewTesting

/// Runs `body` with a fresh server and session, and always stops both.
package func withServerAndSession<T>(
    configuration: SessionConfiguration = SessionConfiguration(),
    handler: @escaping @Sendable (ServerRequest) async -> ServerReply,
    _ body: (LocalHTTPServer, CurlSession) async throws -> T
) async throws -> T {
    let server = try await LocalHTTPServer.start(handler: handler)
    let session = try CurlSession(configuration: configuration)
    do {
        let result = try await body(server, session)
        await session.shutdown()
        try await server.shutdown()
        return result
    } catch {
        await session.shutdown()
        try await server.shutdown()
        throw error
    }
}
