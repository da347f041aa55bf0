// Curlew — sse_server.py on loopback: scripted server-sent event streams over HTTP/1.1 and HTTP/2, every
// request recorded (what each reconnect sent), counts asked over stdin.

import CurlewEngine
import Foundation

/// One attempt of an ``SSEPlan``: what `sse_server.py` answers to the n-th request of a key.
package struct SSEAttempt: Sendable, Encodable {
    /// One thing the server does after a 200 head.
    package enum Step: Sendable, Encodable {
        /// Writes the text (one write; one chunk over HTTP/1.1).
        case send(String)
        /// Writes the bytes (which need not be UTF-8) as one write.
        case sendBytes([UInt8])
        /// Pauses.
        case sleep(milliseconds: Int)
        /// Writes `text` `count` times, `milliseconds` apart (the first after one interval).
        case `repeat`(String, count: Int, every: Int)
        /// Waits until `count` requests have reached the gather `name` (at most `timeout` ms).
        case gather(String, count: Int, timeout: Int = 30_000)
        /// Writes `count` events `id: N\ndata: text\n\n`, N from `first`, one write each, `every` ms apart
        /// (0: back to back; else the first after one interval).
        case numbered(String, count: Int, first: Int = 1, every: Int = 0)

        package func encode(to encoder: any Encoder) throws {
            switch self {
            case .send(let text):
                var container = encoder.singleValueContainer()
                try container.encode(text)
            case .sendBytes(let bytes):
                try ["bytes": Data(bytes).base64EncodedString()].encode(to: encoder)
            case .sleep(let milliseconds):
                try ["sleep": milliseconds].encode(to: encoder)
            case .repeat(let text, let count, let every):
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(text, forKey: .repeat)
                try container.encode(count, forKey: .count)
                try container.encode(every, forKey: .every)
            case .gather(let name, let count, let timeout):
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(name, forKey: .gather)
                try container.encode(count, forKey: .count)
                try container.encode(timeout, forKey: .timeout)
            case .numbered(let text, let count, let first, let every):
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(text, forKey: .numbered)
                try container.encode(count, forKey: .count)
                try container.encode(first, forKey: .first)
                try container.encode(every, forKey: .every)
            }
        }

        private enum Keys: String, CodingKey {
            case `repeat`, count, every, gather, timeout
            case numbered, first
        }
    }

    /// How the response ends after the steps (see the script's documentation).
    package enum End: String, Sendable, Encodable {
        /// The body ends cleanly; an HTTP/1.1 connection stays open.
        case finish
        /// The body ends cleanly, then an HTTP/1.1 connection is closed (HTTP/2: as finish).
        case close
        /// HTTP/1.1: the connection closes before the last chunk; HTTP/2: RST_STREAM.
        case cut
        /// HTTP/1.1: the connection is reset; HTTP/2: RST_STREAM.
        case reset
        /// Nothing more until the client goes away (at most 60 s).
        case silent
    }

    package var status: Int
    /// The Content-Type; nil: none sent.
    package var type: String?
    package var headers: [[String]]
    /// For a status other than 200: the body.
    package var body: String
    package var steps: [Step]
    package var end: End

    /// A 200 event stream (by default `text/event-stream`) doing `steps`, then ending as `end` says.
    package init(
        _ steps: [Step] = [], end: End = .finish, type: String? = "text/event-stream", headers: [[String]] = []
    ) {
        self.status = 200
        self.type = type
        self.headers = headers
        self.body = ""
        self.steps = steps
        self.end = end
    }

    /// A 200 event stream that sends `text` at once, then ends as `end` says.
    package static func events(_ text: String, end: End = .finish) -> SSEAttempt {
        SSEAttempt([.send(text)], end: end)
    }

    /// An answer with `status` (not 200) and nothing of an event stream (0: no answer, see ``noAnswer``).
    package static func status(
        _ status: Int, headers: [[String]] = [], body: String = "", type: String? = "text/plain"
    ) -> SSEAttempt {
        var attempt = SSEAttempt([], type: type, headers: headers)
        attempt.status = status
        attempt.body = body
        return attempt
    }

    /// No answer at all: HTTP/1.1 closes the connection, HTTP/2 resets the stream.
    package static var noAnswer: SSEAttempt { .status(0) }

    private enum CodingKeys: String, CodingKey {
        case status, type, headers, body, steps, end
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        // An explicit null: no Content-Type at all (absent would mean the default).
        if let type { try container.encode(type, forKey: .type) } else { try container.encodeNil(forKey: .type) }
        try container.encode(headers, forKey: .headers)
        try container.encode(body, forKey: .body)
        try container.encode(steps, forKey: .steps)
        try container.encode(end, forKey: .end)
    }
}

/// What `sse_server.py` answers to the requests of one key, attempt by attempt (the last one repeats).
package struct SSEPlan: Sendable {
    package var attempts: [SSEAttempt]

    package init(_ attempts: [SSEAttempt]) {
        self.attempts = attempts
    }

    /// The plan as the `plan` query parameter: base64url of its JSON, without padding.
    package var encoded: String {
        let json = (try? JSONEncoder().encode(attempts)) ?? Data("[]".utf8)
        return json.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

/// One request `sse_server.py` received for a key, and how its attempt ended.
package struct SSERequestRecord: Decodable, Sendable {
    /// Which request of its key (from 1).
    package let attempt: Int
    package let method: String
    /// The request target as sent (path and query).
    package let target: String
    /// Lowercased names.
    package let headers: [String: [String]]
    package let body: String
    /// Its connection's number (from 1, in accept order).
    package let connection: Int
    /// Its number on its connection (from 1).
    package let request: Int
    /// `h2` or `http/1.1`.
    package let `protocol`: String
    /// The server's monotonic clock when it arrived, in seconds.
    package let at: Double
    /// The server's monotonic clock just before the attempt began to end (its answer, its last write,
    /// close or reset; for a silent end, when the silence began): the client cannot have seen the end
    /// earlier. nil until then.
    package let ending: Double?
    /// The server's monotonic clock when the attempt ended; nil until then.
    package let ended: Double?
    /// nil until it ends; then `dropped`, `answered`, `finished`, `closed`, `cut`, `reset`,
    /// `client-gone`, `silence-expired` or `write-failed`.
    package let outcome: String?
    /// Whether a gather step saw all its requests; nil without one.
    package let gathered: Bool?

    /// The first value of a header field (any case), nil when it was not sent.
    package func header(_ name: String) -> String? { headers[name.lowercased()]?.first }

    /// Every value of a header field (any case).
    package func values(_ name: String) -> [String] { headers[name.lowercased()] ?? [] }
}

/// What `sse_server.py` counted: stream_server.py's counts, open connections and the records of `/sse`.
package struct SSEServerStats: Decodable, Sendable {
    /// Connections accepted.
    package let connections: Int
    /// Connections open now.
    package let openConnections: Int
    /// The most connections open at once.
    package let peakOpenConnections: Int
    package let requests: Int
    /// HTTP/2 streams refused (RST_STREAM REFUSED_STREAM) because the client had more open on their
    /// connection than the server's SETTINGS_MAX_CONCURRENT_STREAMS.
    package let refusedStreams: Int
    /// Each refused stream: its connection's number, its stream id and its request target.
    package let refused: [Refusal]
    /// HTTP/2 protocol errors the server saw (a client exceeding the stream limit shows here).
    package let protocolErrors: [String]
    /// The records of `/sse`, per key.
    package let logs: [String: [SSERequestRecord]]

    /// An HTTP/2 stream the server refused.
    package struct Refusal: Decodable, Sendable, CustomStringConvertible {
        package let connection: Int
        package let stream: Int
        package let path: String

        package var description: String { "stream \(stream) on connection \(connection)" }
    }

    enum CodingKeys: String, CodingKey {
        case connections, requests, logs, refused
        case openConnections = "open_connections"
        case peakOpenConnections = "peak_open_connections"
        case protocolErrors = "protocol_errors"
        case refusedStreams = "refused_streams"
    }

    /// The records of `key` (empty when none arrived).
    package func records(_ key: String) -> [SSERequestRecord] { logs[key] ?? [] }
}

/// `sse_server.py` on 127.0.0.1: `/sse?key=K&plan=P` serves the plan's attempts; see the script's
/// documentation. Its options are `stream_server.py`'s (``StreamServerOptions``), whose routes it also serves.
package final class SSETestServer: Sendable {
    package let isTLS: Bool
    private let server: ScriptServer
    private let statsLock = Locked(0)  // Int, not Void: see TestProcess's launch lock

    private init(server: ScriptServer, isTLS: Bool) {
        self.server = server
        self.isTLS = isTLS
    }

    package var port: Int { server.port }

    /// `http://127.0.0.1:PORT/path`, or https for a TLS server.
    package func url(_ path: String) -> String {
        "\(isTLS ? "https" : "http")://127.0.0.1:\(port)\(path.hasPrefix("/") ? path : "/" + path)"
    }

    /// The URL of `/sse` serving `plan` to the requests of `key`, with `query` appended (`a=b&c=d`).
    package func url(key: String, plan: SSEPlan, query: String = "") -> String {
        url("/sse?key=\(key)&plan=\(plan.encoded)" + (query.isEmpty ? "" : "&" + query))
    }

    package var standardError: String { server.standardError }

    package static func start(_ options: StreamServerOptions = StreamServerOptions()) async throws -> SSETestServer {
        let server = try await ScriptServer.start(script: "sse_server.py", arguments: options.arguments)
        return SSETestServer(server: server, isTLS: options.identity != nil)
    }

    /// What the server counted, asked over its stdin (no connection is opened for it).
    package func stats(timeout: Duration = .seconds(10)) async throws -> SSEServerStats {
        let line: String? = await {
            let written = statsLock.withLock { _ in server.write("stats\n") }
            guard written else { return nil }
            return await server.nextLine(timeout: timeout)
        }()
        guard let line else {
            throw TestInfrastructureError(description: "sse_server.py did not answer `stats`; stderr:\n\(standardError)")
        }
        return try JSONDecoder().decode(SSEServerStats.self, from: Data(line.utf8))
    }

    /// Polls ``stats(timeout:)`` every 20 ms until `condition` holds (or `seconds` pass); returns the last.
    package func stats(within seconds: Double = 20, until condition: (SSEServerStats) -> Bool) async throws -> SSEServerStats {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var current = try await stats()
        while !condition(current), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
            current = try await stats()
        }
        return current
    }

    /// The records of `key` now.
    package func records(_ key: String) async throws -> [SSERequestRecord] {
        try await stats().records(key)
    }

    /// The records of `key` once `condition` holds on them (or `seconds` pass: the last ones).
    package func records(
        _ key: String, within seconds: Double = 20, until condition: ([SSERequestRecord]) -> Bool
    ) async throws -> [SSERequestRecord] {
        try await stats(within: seconds) { condition($0.records(key)) }.records(key)
    }

    package func stop() async {
        await server.stop()
    }
}

extension SSETestServer {
    private static let sharedServers = Locked<[[String]: Task<SSETestServer, any Error>]>([:])

    /// A server for `options` shared by every test of this process that asks for the same options,
    /// started on first use; it exits with the process. Tests keep apart by their keys.
    package static func shared(_ options: StreamServerOptions = StreamServerOptions()) async throws -> SSETestServer {
        let task = sharedServers.withLock { servers in
            if let task = servers[options.arguments] { return task }
            let task = Task { try await SSETestServer.start(options) }
            servers[options.arguments] = task
            return task
        }
        return try await task.value
    }
}

/// Runs `body` with a shared `sse_server.py` speaking `wire` (HTTP/2: over TLS with the fixture leaf,
/// which the session trusts), or one of its own when `ownServer` (stopped at the end), and a session of
/// its own; shuts the session down.
package func withSSEServerAndSession<T>(
    _ wire: Wire = .http1, options: StreamServerOptions = StreamServerOptions(), ownServer: Bool = false,
    configure: (inout SessionConfiguration) -> Void = { _ in },
    _ body: (SSETestServer, CurlSession) async throws -> T
) async throws -> T {
    var options = options
    var configuration = SessionConfiguration()
    if wire == .http2 {
        let fixtures = try await TLSFixtures.shared()
        options.identity = fixtures.leaf
        configuration.tls.trustRoots = .file(fixtures.ca.certificate)
    }
    configure(&configuration)
    let server = try await ownServer ? SSETestServer.start(options) : SSETestServer.shared(options)
    let session = try CurlSession(configuration: configuration)
    return try await ensuring(
        { try await body(server, session) },
        cleanUp: {
            await session.shutdown()
            if ownServer { await server.stop() }
        })
}
