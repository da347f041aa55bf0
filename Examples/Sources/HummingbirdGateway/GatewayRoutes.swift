// The routes: each calls the upstream and answers with what it got.

import Curlew
import Hummingbird
import Logging

/// The service's routes, each answered by a call to the upstream API through ``api``.
struct GatewayRoutes: Sendable {
    /// The app's one provider for the upstream.
    let api: Provider<UpstreamAPI>

    /// Adds the routes to `router`.
    func register(on router: Router<GatewayRequestContext>) {
        router.get("/users/:id", use: user)
        router.get("/slow", use: slow)
    }

    /// `GET /users/:id`: the upstream's `GET /users/{id}`.
    @Sendable func user(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int.self)
        return try await answer(context) { [api] () async throws(CurlewError) in
            try await api.request(.user(id: id), as: User.self)
        }
    }

    /// `GET /slow?seconds=N`: the upstream's `GET /slow?seconds=N`, which answers after N seconds
    /// (default 5): for watching cancellation and shutdown.
    @Sendable func slow(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let seconds = request.uri.queryParameters.get("seconds", as: Int.self) ?? 5
        return try await answer(context) { [api] () async throws(CurlewError) in
            try await api.request(.slow(seconds: seconds), as: SlowAnswer.self)
        }
    }

    /// Makes the upstream call in a task that the client's leaving cancels, and turns its outcome into
    /// this service's answer.
    private func answer<Value: Encodable & Sendable>(
        _ context: GatewayRequestContext,
        _ call: @escaping @Sendable () async throws(CurlewError) -> ApiResult<Value, UpstreamError>
    ) async throws -> Response {
        let (logger, channel) = (context.logger, context.channel)
        return try await withCancellationOnClose(of: channel) {
            let result: ApiResult<Value, UpstreamError>
            do throws(CurlewError) {
                result = try await call()
            } catch {
                if error.isCancellation {
                    // An open channel means the cancellation came from the service group instead: the
                    // service is stopping past its grace period (and nobody gets an answer either way).
                    let reason = channel.isActive ? "the service is stopping" : "the client left"
                    logger.info("Upstream call cancelled", metadata: ["reason": "\(reason)"])
                } else {
                    logger.warning("Upstream call failed", metadata: ["error": "\(error)"])
                }
                return try error.gatewayResponse()
            }
            return try result.gatewayResponse()
        }
    }
}
