// Curlew — adds an access token to the requests of targets that ask for one.

/// How a target wants to be authorised.
public enum AuthorizationType: Sendable, Hashable {
    /// `Authorization: Bearer <token>`.
    case bearer
    /// `Authorization: Basic <token>` (the token is the already-encoded credentials).
    case basic
    /// `Authorization: <scheme> <token>`.
    case custom(String)

    /// The scheme word sent before the token.
    public var value: String {
        switch self {
        case .bearer: "Bearer"
        case .basic: "Basic"
        case .custom(let scheme): scheme
        }
    }
}

/// A target that opts in to ``AccessTokenPlugin``.
public protocol AccessTokenAuthorizable: TargetType {
    /// The authorisation this target needs, or nil for none.
    var authorizationType: AuthorizationType? { get }
}

/// Sets the `Authorization` header for targets conforming to ``AccessTokenAuthorizable``.
///
/// The token closure is async and called for every request, so a token can be refreshed or read
/// from a store; it may throw to fail the request.
public struct AccessTokenPlugin: PluginType {
    /// Produces the token for a target (the wrapped target when the provider serves ``MultiTarget``).
    public typealias TokenClosure = @Sendable (_ authorizationType: AuthorizationType, _ target: any TargetType) async throws -> String

    let tokenClosure: TokenClosure

    /// Creates the plugin with the closure that produces tokens.
    public init(tokenClosure: @escaping TokenClosure) {
        self.tokenClosure = tokenClosure
    }

    /// Sets `Authorization` for targets whose ``AccessTokenAuthorizable/authorizationType`` is not nil.
    ///
    /// The token closure receives the target the caller wrote: a ``MultiTarget`` is unwrapped first.
    public func prepare(_ request: TransportRequest, target: any TargetType) async throws -> TransportRequest {
        let inner = MultiTarget.unwrapped(target)
        guard let authorizable = inner as? any AccessTokenAuthorizable,
            let authorizationType = authorizable.authorizationType
        else { return request }
        let token = try await tokenClosure(authorizationType, inner)
        var request = request
        try request.setValue("\(authorizationType.value) \(token)", forHTTPHeaderField: "Authorization")
        return request
    }
}
