// Curlew — the JSON report tls_server.py answers every request with.

import CurlewEngine
import Foundation

/// The JSON body `tls_server.py` answers every request with.
package struct TLSEcho: Decodable, Sendable, Hashable {
    package let method: String
    /// The request target, query included.
    package let path: String
    /// `TLSv1.2` or `TLSv1.3`.
    package let tlsVersion: String
    package let cipher: String?
    /// The ALPN protocol agreed on, if any.
    package let alpn: String?
    /// The server name the client sent (SNI); nil for an IP address.
    package let serverName: String?
    /// Whether this connection's TLS session was resumed.
    package let sessionReused: Bool
    /// The common name of the client certificate, if one was presented and verified.
    package let clientCertificateCommonName: String?
    /// This connection's number, from 1 in accept order.
    package let connection: Int
    /// How many connections the server had accepted when it answered.
    package let connections: Int
    /// This request's number on its connection, from 1.
    package let request: Int
    /// The request body's length.
    package let bodyLength: Int

    enum CodingKeys: String, CodingKey {
        case method, path, cipher, alpn, connection, connections, request
        case tlsVersion = "tls_version"
        case serverName = "sni"
        case sessionReused = "session_reused"
        case clientCertificateCommonName = "client_cert_cn"
        case bodyLength = "body_length"
    }

    /// Parses a body from `tls_server.py`.
    package init(_ body: Data) throws {
        self = try JSONDecoder().decode(TLSEcho.self, from: body)
    }

    /// Parses the body of a response from `tls_server.py`.
    package init(_ response: TransportResponse) throws {
        try self.init(response.body)
    }
}
