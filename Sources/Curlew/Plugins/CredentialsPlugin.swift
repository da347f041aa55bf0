// Curlew — HTTP Basic credentials for a provider's requests.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A user name and password for HTTP Basic authentication.
public struct Credentials: Sendable, Hashable {
    /// The user name (must not contain a colon).
    public var user: String
    /// The password.
    public var password: String

    /// Creates credentials.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// The `Authorization` header value: `Basic base64(user:password)`.
    public var basicAuthorization: String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}

/// Sends HTTP Basic credentials with every request whose closure returns some.
///
/// (Digest authentication is not offered: it needs a challenge–response round trip this plugin does
/// not perform.)
public struct CredentialsPlugin: PluginType {
    /// Chooses the credentials for a target (the wrapped target under ``MultiTarget``), or nil for none.
    public typealias CredentialsClosure = @Sendable (_ target: any TargetType) async -> Credentials?

    let credentialsClosure: CredentialsClosure

    /// Creates the plugin with the closure that chooses credentials.
    public init(credentialsClosure: @escaping CredentialsClosure) {
        self.credentialsClosure = credentialsClosure
    }

    /// Sets `Authorization: Basic ...` when the closure returns credentials for the target (a
    /// ``MultiTarget`` is unwrapped first).
    public func prepare(_ request: TransportRequest, target: any TargetType) async throws -> TransportRequest {
        guard let credentials = await credentialsClosure(MultiTarget.unwrapped(target)) else { return request }
        var request = request
        try request.setValue(credentials.basicAuthorization, forHTTPHeaderField: "Authorization")
        return request
    }
}
