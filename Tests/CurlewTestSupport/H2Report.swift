// Curlew — the JSON report h2_server.py answers ordinary requests with.

import Foundation

/// The JSON body `h2_server.py` answers ordinary requests with.
package struct H2Report: Decodable, Sendable, Hashable {
    /// This connection's number, from 1 in accept order.
    package let connection: Int
    /// The HTTP/2 stream id (for HTTP/1.1: the request's number on its connection).
    package let stream: Int
    /// How many connections the server had accepted when it answered.
    package let connections: Int
    /// This connection's requests in progress when this one arrived, itself included.
    package let concurrent: Int
    /// `h2` or `http/1.1`.
    package let `protocol`: String
    package let method: String
    /// The request target, query included.
    package let path: String
    /// The `Cookie` field received (fields joined with `; `), if any.
    package let cookie: String?
    package let bodyLength: Int
    package let tls: Bool

    enum CodingKeys: String, CodingKey {
        case connection, stream, connections, concurrent, `protocol`, method, path, cookie, tls
        case bodyLength = "body_length"
    }

    /// Parses a body from `h2_server.py`.
    package init(_ body: Data) throws {
        self = try JSONDecoder().decode(H2Report.self, from: body)
    }
}
