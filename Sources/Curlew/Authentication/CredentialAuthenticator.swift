// Curlew — what an AuthenticationMiddleware needs to know about a credential: how to apply it, how to
// get a new one, and when the server refused it.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import HTTPTypes

/// A credential a ``CredentialAuthenticator`` applies: an OAuth access token, a signed session.
public protocol AuthenticationCredential: Sendable {
    /// Whether the credential should be refreshed before it is used at `date` (it expires within a
    /// minute, say). The default: never ahead of time, only when a server refuses it.
    func requiresRefresh(at date: Date) -> Bool
}

extension AuthenticationCredential {
    public func requiresRefresh(at date: Date) -> Bool { false }
}

/// Applies and refreshes a credential for an ``AuthenticationMiddleware``.
///
/// ```swift
/// struct OAuth: CredentialAuthenticator {
///     let tokens: TokenService
///     func apply(_ credential: Token, to request: inout TransportRequest) {
///         request.headerFields[.authorization] = "Bearer \(credential.access)"
///     }
///     func refresh(_ credential: Token?, context: MiddlewareContext) async throws -> Token {
///         try await tokens.refresh(credential?.refresh)
///     }
/// }
/// ```
public protocol CredentialAuthenticator: Sendable {
    /// The credential this authenticator applies.
    associatedtype Credential: AuthenticationCredential

    /// Adds the credential to the request (usually its `Authorization` field).
    func apply(_ credential: Credential, to request: inout TransportRequest)

    /// Returns a new credential; `credential` is the one in use (nil before the first). Called once
    /// however many requests need it at the same time.
    func refresh(_ credential: Credential?, context: MiddlewareContext) async throws -> Credential

    /// Whether the response head says the credential was refused. Default: status 401.
    func isAuthenticationFailure(_ head: ResponseHead, for request: TransportRequest) -> Bool

    /// Whether the request is authenticated at all. Default: every request.
    func authenticates(_ request: TransportRequest, context: MiddlewareContext) -> Bool
}

extension CredentialAuthenticator {
    public func isAuthenticationFailure(_ head: ResponseHead, for request: TransportRequest) -> Bool {
        head.status == .unauthorized
    }

    public func authenticates(_ request: TransportRequest, context: MiddlewareContext) -> Bool { true }
}

/// Why an ``AuthenticationMiddleware`` could not authenticate a request; thrown as
/// ``CurlewError/underlying(_:_:)``.
public enum AuthenticationError: Error, CustomStringConvertible {
    /// The authenticator's refresh threw this error; every request waiting for that refresh fails so.
    case refreshFailed(any Error)
    /// The credential was refreshed `maxRefreshes` times within `window` already (the server keeps
    /// refusing new credentials): no further refresh until the window has passed.
    case refreshLimitReached(maxRefreshes: Int, window: Duration)

    public var description: String {
        switch self {
        case .refreshFailed(let error): "refreshing the credential failed: \(error)"
        case .refreshLimitReached(let count, let window):
            "the credential was refreshed \(count) times within \(window); not refreshing again yet"
        }
    }
}
