// Curlew — stream_server.py on loopback: bodies streamed both ways over HTTP/1.1 and HTTP/2, with the
// server's byte counts asked over stdin.

import CurlewEngine
import Foundation

/// How a ``StreamTestServer`` is configured: the command-line options of `stream_server.py`.
package struct StreamServerOptions: Sendable {
    /// The certificate and key to serve over TLS (ALPN `h2` and `http/1.1`); nil: cleartext, where a
    /// connection opening with the HTTP/2 preface speaks HTTP/2 (prior knowledge).
    package var identity: TLSFixtures.Identity?
    /// ALPN protocols offered over TLS; empty: `h2` then `http/1.1`.
    package var alpn: [String] = []
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    package var maxConcurrentStreams = 100
    /// The HTTP/2 window the server grants each request body before its route reads it.
    package var initialWindow = 65535
    /// SO_SNDBUF of accepted sockets; 0: the kernel's.
    package var sendBuffer = 0

    package init(identity: TLSFixtures.Identity? = nil) {
        self.identity = identity
    }

    var arguments: [String] {
        var arguments = ["--max-concurrent-streams", String(maxConcurrentStreams), "--initial-window", String(initialWindow)]
        if let identity { arguments += ["--cert", identity.chain, "--key", identity.key] }
        for name in alpn { arguments += ["--alpn", name] }
        if sendBuffer > 0 { arguments += ["--sndbuf", String(sendBuffer)] }
        return arguments
    }
}

/// `stream_server.py` on 127.0.0.1: see the script's documentation for its routes (`/bytes`, `/bomb`,
/// `/echo`, `/speak`, `/trailers`, `/request`, `/early`, `/redirect`, `/slow-read`, `/stall`,
/// `/stall-body`, `/drip`, `/file`, `/inflate`, `/hold`, `/release`, `/trickle`, `/log`, `/stats`).
package final class StreamTestServer: Sendable {
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

    package var standardError: String { server.standardError }

    package static func start(_ options: StreamServerOptions = StreamServerOptions()) async throws -> StreamTestServer {
        let server = try await ScriptServer.start(script: "stream_server.py", arguments: options.arguments)
        return StreamTestServer(server: server, isTLS: options.identity != nil)
    }

    /// What the server counted, asked over its stdin (no connection is opened for it).
    package func stats(timeout: Duration = .seconds(10)) async throws -> StreamServerStats {
        let written = statsLock.withLock { _ in server.write("stats\n") }
        guard written, let line = await server.nextLine(timeout: timeout) else {
            throw TestInfrastructureError(description: "stream_server.py did not answer `stats`; stderr:\n\(standardError)")
        }
        return try JSONDecoder().decode(StreamServerStats.self, from: Data(line.utf8))
    }

    /// Polls ``stats(timeout:)`` every 20 ms until `condition` holds (or `seconds` pass); returns the last.
    package func stats(within seconds: Double = 20, until condition: (StreamServerStats) -> Bool) async throws -> StreamServerStats {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var current = try await stats()
        while !condition(current), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
            current = try await stats()
        }
        return current
    }

    package func stop() async {
        await server.stop()
    }
}

extension StreamTestServer {
    private static let sharedServers = Locked<[[String]: Task<StreamTestServer, any Error>]>([:])

    /// A server for `options` shared by every test of this process that asks for the same options,
    /// started on first use; it exits with the process (it watches its stdin). Its counts include
    /// other tests' requests: tests tell theirs apart with tags.
    package static func shared(_ options: StreamServerOptions = StreamServerOptions()) async throws -> StreamTestServer {
        let task = sharedServers.withLock { servers in
            if let task = servers[options.arguments] { return task }
            let task = Task { try await StreamTestServer.start(options) }
            servers[options.arguments] = task
            return task
        }
        return try await task.value
    }
}

/// Runs `body` with a started `stream_server.py` of its own and always stops it.
package func withStreamServer<T>(
    _ options: StreamServerOptions = StreamServerOptions(), _ body: (StreamTestServer) async throws -> T
) async throws -> T {
    let server = try await StreamTestServer.start(options)
    return try await ensuring({ try await body(server) }, cleanUp: { await server.stop() })
}

/// What `stream_server.py` counted.
package struct StreamServerStats: Decodable, Sendable {
    /// The connection of a tagged exchange, at the moment the stats were asked.
    package struct Tag: Decodable, Sendable {
        /// Bytes the kernel accepted on the connection so far.
        package let written: Int
        /// The connection's unsent and unacknowledged bytes (SIOCOUTQ).
        package let outq: Int
        /// The client's port.
        package let peerPort: Int
        /// The connection's number (from 1, in accept order).
        package let connection: Int
        /// Whether the route finished.
        package let done: Bool
        /// Whether a write has been waiting for more than 200 ms.
        package let blocked: Bool

        enum CodingKeys: String, CodingKey {
            case written, outq, done, blocked, connection
            case peerPort = "peer_port"
        }
    }

    package let connections: Int
    package let requests: Int
    package let dropped: [String]
    package let tags: [String: Tag]
}

/// What `/request` answers: the request as the server received it.
package struct ReceivedRequest: Decodable, Sendable {
    package let method: String
    package let path: String
    package let headers: [String: [String]]
    package let body: String
    package let bodyLength: Int
    package let trailers: [String: [String]]
    package let connection: Int
    package let request: Int
    package let `protocol`: String

    enum CodingKeys: String, CodingKey {
        case method, path, headers, body, trailers, connection, request, `protocol`
        case bodyLength = "body_length"
    }

    package init(_ data: Data) throws {
        self = try JSONDecoder().decode(ReceivedRequest.self, from: data)
    }

    /// The first value of a header field (names as received, lowercased).
    package func header(_ name: String) -> String? { headers[name.lowercased()]?.first }
}

/// The bytes `/bytes` sends: byte i is i % 251.
package func streamPattern(count: Int, from offset: Int = 0) -> [UInt8] {
    // One period, repeated: a per-byte loop costs a debug build tens of milliseconds per megabyte, time
    // taken from the task pool that other tests' servers need.
    let period = (0..<251).map { UInt8(truncatingIfNeeded: ($0 + offset) % 251) }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    while bytes.count < count { bytes.append(contentsOf: period.prefix(count - bytes.count)) }
    return bytes
}

/// Which protocol a streaming test runs over: HTTP/1.1 in cleartext, or HTTP/2 over TLS (ALPN `h2`),
/// as a server-side client meets them.
package enum Wire: String, Sendable, CaseIterable, CustomStringConvertible {
    case http1 = "HTTP/1.1"
    case http2 = "HTTP/2"

    package var description: String { rawValue }
}

/// Runs `body` with a shared `stream_server.py` speaking `wire` (see ``StreamTestServer/shared(_:)``),
/// or one of its own when `ownServer` (stopped at the end), and a session of its own that trusts it;
/// shuts the session down.
package func withStreamServerAndSession<T>(
    _ wire: Wire, options: StreamServerOptions = StreamServerOptions(), ownServer: Bool = false,
    configure: (inout SessionConfiguration) -> Void = { _ in },
    _ body: (StreamTestServer, CurlSession) async throws -> T
) async throws -> T {
    var options = options
    var configuration = SessionConfiguration()
    if wire == .http2 {
        let fixtures = try await TLSFixtures.shared()
        options.identity = fixtures.leaf
        configuration.tls.trustRoots = .file(fixtures.ca.certificate)
    }
    configure(&configuration)
    let server = try await ownServer ? StreamTestServer.start(options) : StreamTestServer.shared(options)
    let session = try CurlSession(configuration: configuration)
    return try await ensuring(
        { try await body(server, session) },
        cleanUp: {
            await session.shutdown()
            if ownServer { await server.stop() }
        })
}
