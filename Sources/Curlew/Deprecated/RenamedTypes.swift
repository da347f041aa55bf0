// Curlew — names before 0.1.0, kept for one release so that code written against them still builds (with
// a warning and a fix-it). They shared their names with types of Vapor and SwiftNIO, so a file importing
// both had to qualify them; removed in 0.2.0.

/// The method of a target. Renamed: use swift-http-types' `HTTPRequest.Method`, or ``Method``.
@available(*, deprecated, renamed: "HTTPRequest.Method")
public typealias HTTPMethod = HTTPRequest.Method

/// Code that wraps each exchange. Renamed ``TransportMiddleware``.
@available(*, deprecated, renamed: "TransportMiddleware")
public typealias Middleware = TransportMiddleware

/// Applies and refreshes a credential. Renamed ``CredentialAuthenticator``.
@available(*, deprecated, renamed: "CredentialAuthenticator")
public typealias Authenticator = CredentialAuthenticator
