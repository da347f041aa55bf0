// Curlew — what the loopback test server answers, including faults.

/// How ``LocalHTTPServer`` answers a request: normal responses and byte-level faults.
public enum ServerReply: Sendable {
    /// A response; `Content-Length` is added from the body unless the headers set `Content-Length`
    /// or `Transfer-Encoding` themselves.
    case respond(status: Int, headers: [(String, String)] = [], body: [UInt8] = [])
    /// A response whose body is sent with `Transfer-Encoding: chunked`, one chunk per element.
    case chunked(status: Int, headers: [(String, String)] = [], chunks: [[UInt8]])
    /// Waits, then answers; the wait does not block the server.
    indirect case delayed(Duration, ServerReply)
    /// Writes exactly these bytes (no framing added), then ends the connection as `after` says.
    case raw([UInt8], after: RawEnding)
    /// Writes `head` as given, then `count` times `chunk`, each after `interval`, then ends as `after` says.
    case drip(head: [UInt8], chunk: [UInt8], interval: Duration, count: Int, after: RawEnding)
    /// Never answers; the connection stays open until the client closes it or the server stops.
    case hang

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> ServerReply {
        .respond(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + headers, body: Array(text.utf8))
    }

    /// An `application/json` response.
    public static func json(_ json: String, status: Int = 200, headers: [(String, String)] = []) -> ServerReply {
        .respond(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(json.utf8))
    }

    /// A `text/html; charset=utf-8` response.
    public static func html(_ html: String, status: Int = 200) -> ServerReply {
        .respond(status: status, headers: [("Content-Type", "text/html; charset=utf-8")], body: Array(html.utf8))
    }
}

/// How a raw or dripped reply leaves the connection.
public enum RawEnding: Sendable {
    /// Leave the connection open.
    case keepOpen
    /// Close it normally (FIN).
    case close
    /// Abort it: `SO_LINGER` 0, so the client gets a TCP reset.
    case reset
}
