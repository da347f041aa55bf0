// Curlew — pointing a provider's targets at the loopback test server in one line.

public import Curlew

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension LocalHTTPServer {
    /// An endpoint closure that sends every target to this server instead of its own host.
    ///
    /// The target's scheme, host and port are replaced by the server's; the base URL's path, the target's
    /// path, method, task, headers and sample data are kept, so the server sees the paths production
    /// would see:
    ///
    /// ```swift
    /// let provider = Provider<GitHub>(endpointClosure: server.endpointMapping())
    /// ```
    ///
    /// - Returns: A closure for ``/Curlew/Provider/init(endpointClosure:baseURL:requestClosure:stubClosure:session:plugins:middleware:trackInflights:decoder:logger:)``.
    public func endpointMapping<Target: TargetType>() -> @Sendable (Target) -> Endpoint {
        let origin = baseURL
        return { target in
            let base = target.baseURL
            var path = base.path(percentEncoded: true)
            if let query = base.query(percentEncoded: true) { path += "?" + query }
            // The server's origin is a valid URL and the target's path and query were already valid in
            // its base URL, so this only fails for a base URL Foundation could not have built.
            let moved = URL(string: origin + path) ?? base
            return Endpoint.default(for: target, baseURL: moved)
        }
    }
}
