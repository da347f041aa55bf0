// Curlew — real HTTP/2 servers on loopback for the engine's tests: Tests/Servers/h2_server.py (Python's
// `h2`, with faults on demand) and Debian's `nghttpd`.
//
// `H2TestServer.start(_:)` runs h2_server.py on a free port (TLS with a fixture identity and ALPN, or
// cleartext); `stats()` asks it, over its stdin, what it counted (connections, streams in progress, the
// most streams one connection carried at once), which opens no connection of its own. `NghttpdServer`
// runs `nghttpd` (package nghttp2-server) on a free port, with a document root of its own. Both exit
// when this process does: they watch their stdin, a pipe only this process writes to.

import CurlewEngine
import Foundation

// MARK: - h2_server.py

/// How an ``H2TestServer`` is configured: the command-line options of `h2_server.py`.
struct H2ServerOptions: Sendable {
    /// The certificate and key to serve over TLS; nil: cleartext (HTTP/2 by prior knowledge, or HTTP/1.1).
    var identity: TLSFixtures.Identity?
    /// The ALPN protocols offered over TLS; empty: the server's default, `h2` then `http/1.1`.
    var alpn: [String] = []
    /// SETTINGS_MAX_CONCURRENT_STREAMS, the most streams the server lets one connection open at once.
    var maxConcurrentStreams = 250
    /// Log connections, GOAWAYs and errors to the server's stderr (see ``H2TestServer/standardError``).
    var verbose = false

    /// HTTPS serving `identity` (its chain).
    static func tls(_ identity: TLSFixtures.Identity) -> H2ServerOptions {
        H2ServerOptions(identity: identity)
    }

    /// Cleartext.
    static var cleartext: H2ServerOptions { H2ServerOptions(identity: nil) }

    var arguments: [String] {
        var arguments = ["--max-concurrent-streams", String(maxConcurrentStreams)]
        if let identity { arguments += ["--cert", identity.chain, "--key", identity.key] }
        for protocolName in alpn { arguments += ["--alpn", protocolName] }
        if verbose { arguments.append("--verbose") }
        return arguments
    }
}

/// `h2_server.py` running on 127.0.0.1. See the script's documentation for what each path does: `/ok`,
/// `/delay?ms=N`, `/reset?code=…`, `/refuse-once?tag=…`, `/goaway?keep=K`, `/bad-frame`, `/trailers`,
/// `/set-cookie?c=…`, `/stats`.
final class H2TestServer: Sendable {
    /// The port the server listens on.
    let port: Int
    /// Whether it speaks TLS (https URLs) or cleartext (http).
    let isTLS: Bool
    private let process: ProcessBox
    private let output: LineReader
    private let standardErrorFile: String
    /// One `stats` exchange at a time, so answers pair with questions.
    private let statsLock = Locked(0)  // Int, not Void: see TLSTestScripts.launching

    private init(port: Int, isTLS: Bool, process: ProcessBox, output: LineReader, standardErrorFile: String) {
        self.port = port
        self.isTLS = isTLS
        self.process = process
        self.output = output
        self.standardErrorFile = standardErrorFile
    }

    deinit {
        process.terminate()
        try? FileManager.default.removeItem(atPath: standardErrorFile)
    }

    static let script = TLSTestScripts.directory.appendingPathComponent("h2_server.py").path

    /// `https://HOST:PORT/path` (http for a cleartext server). The fixture leaf covers `127.0.0.1`,
    /// `localhost`, `a.test` and `*.a.test`; names other than the IP need a host override.
    func url(_ path: String = "/", host: String = "127.0.0.1") -> String {
        "\(isTLS ? "https" : "http")://\(host):\(port)\(path.hasPrefix("/") ? path : "/" + path)"
    }

    /// What the server wrote to stderr so far (only with ``H2ServerOptions/verbose``, or errors).
    var standardError: String {
        (FileManager.default.contents(atPath: standardErrorFile) ?? Data()).text
    }

    /// Starts a server and waits (up to `timeout`) for the port it listens on.
    static func start(_ options: H2ServerOptions, timeout: Duration = .seconds(15)) async throws -> H2TestServer {
        ignoreBrokenPipes()
        let standardErrorFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("curlew-h2-server-\(getpid())-\(UUID().uuidString.prefix(8)).log").path
        guard FileManager.default.createFile(atPath: standardErrorFile, contents: nil),
            let errorHandle = FileHandle(forWritingAtPath: standardErrorFile)
        else {
            throw TLSTestInfrastructureError(description: "cannot create \(standardErrorFile)")
        }
        let process = TLSTestScripts.pythonProcess([script] + options.arguments)
        // One launch at a time, so no other child inherits this one's pipes (see TLSTestScripts.launching).
        let (box, outputPipe) = try TLSTestScripts.launching.withLock { _ throws(TLSTestInfrastructureError) in
            let input = Pipe()
            let outputPipe = Pipe()
            process.standardInput = input
            process.standardOutput = outputPipe
            process.standardError = errorHandle
            let box = ProcessBox(process, input: input.fileHandleForWriting)
            do {
                try process.run()
            } catch {
                try? errorHandle.close()
                try? FileManager.default.removeItem(atPath: standardErrorFile)
                throw TLSTestInfrastructureError(description: "cannot run \(TLSTestScripts.python[0]): \(error)")
            }
            try? errorHandle.close()
            try? input.fileHandleForReading.close()
            try? outputPipe.fileHandleForWriting.close()
            return (box, outputPipe)
        }
        let output = LineReader(outputPipe.fileHandleForReading)

        func failure(_ reason: String) -> TLSTestInfrastructureError {
            box.terminate()
            let log = (FileManager.default.contents(atPath: standardErrorFile) ?? Data()).text
            try? FileManager.default.removeItem(atPath: standardErrorFile)
            return TLSTestInfrastructureError(
                description: "h2_server.py \(options.arguments.joined(separator: " ")): \(reason)\n"
                    + "stderr:\n\(log.isEmpty ? "(empty)" : log)")
        }
        guard let line = await output.next(timeout: timeout) else {
            throw failure("printed no port within \(timeout) (or exited)")
        }
        struct PortLine: Decodable { let port: Int }
        guard let decoded = try? JSONDecoder().decode(PortLine.self, from: Data(line.utf8)), decoded.port > 0 else {
            throw failure("expected {\"port\": N}, got \(line.debugDescription)")
        }
        return H2TestServer(
            port: decoded.port, isTLS: options.identity != nil, process: box, output: output,
            standardErrorFile: standardErrorFile)
    }

    /// What the server counted so far, asked over its stdin (no connection is opened for it).
    func stats(timeout: Duration = .seconds(10)) async throws -> H2ServerStats {
        let line: String? = await {
            // Pairs this question with the next answer line; the lock is held only while writing, and
            // answers come back in the order the questions were written.
            let written = statsLock.withLock { _ in process.write("stats\n") }
            guard written else { return nil }
            return await output.next(timeout: timeout)
        }()
        guard let line else {
            throw TLSTestInfrastructureError(description: "h2_server.py did not answer `stats`; stderr:\n\(standardError)")
        }
        return try JSONDecoder().decode(H2ServerStats.self, from: Data(line.utf8))
    }

    /// Polls ``stats(timeout:)`` every 10 ms until `condition` holds (or `seconds` pass); returns the last stats.
    func stats(within seconds: Double = 5, until condition: (H2ServerStats) -> Bool) async throws -> H2ServerStats {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var current = try await stats()
        while !condition(current), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
            current = try await stats()
        }
        return current
    }

    /// Stops the server: closes its stdin, sends SIGTERM and waits for it to exit (SIGKILL after 5 s).
    func stop() async {
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning {
            process.kill()
            await process.waitForExit()
        }
    }
}

/// Runs `body` with a started `h2_server.py` and always stops it.
func withH2TestServer<T>(_ options: H2ServerOptions, _ body: (H2TestServer) async throws -> T) async throws -> T {
    let server = try await H2TestServer.start(options)
    return try await ensuring({ try await body(server) }, cleanUp: { await server.stop() })
}

/// The JSON body `h2_server.py` answers ordinary requests with.
struct H2Report: Decodable, Sendable, Hashable {
    /// This connection's number, from 1 in accept order.
    let connection: Int
    /// The HTTP/2 stream id (for HTTP/1.1: the request's number on its connection).
    let stream: Int
    /// How many connections the server had accepted when it answered.
    let connections: Int
    /// This connection's requests in progress when this one arrived, itself included.
    let concurrent: Int
    /// `h2` or `http/1.1`.
    let `protocol`: String
    let method: String
    /// The request target, query included.
    let path: String
    /// The `Cookie` field received (fields joined with `; `), if any.
    let cookie: String?
    let bodyLength: Int
    let tls: Bool

    enum CodingKeys: String, CodingKey {
        case connection, stream, connections, concurrent, `protocol`, method, path, cookie, tls
        case bodyLength = "body_length"
    }

    init(_ body: Data) throws {
        self = try JSONDecoder().decode(H2Report.self, from: body)
    }
}

/// What `h2_server.py` counted (its `/stats`, or the `stats` command).
struct H2ServerStats: Decodable, Sendable {
    struct Connection: Decodable, Sendable {
        let `protocol`: String?
        let requests: Int
        /// The most requests this connection had in progress at once.
        let peakStreams: Int
        let closed: Bool

        enum CodingKeys: String, CodingKey {
            case `protocol`, requests, closed
            case peakStreams = "peak_streams"
        }
    }

    /// Connections accepted.
    let connections: Int
    let openConnections: Int
    let peakOpenConnections: Int
    /// Requests received (each retry counts again).
    let requests: Int
    /// Requests received and not yet answered, over all connections.
    let inProgress: Int
    /// The most requests one connection had in progress at once.
    let peakStreams: Int
    let resetsSent: Int
    let goawaysSent: Int
    /// RST_STREAM frames received from clients.
    let clientResets: Int
    /// HTTP/2 protocol errors the server saw (a client exceeding the stream limit shows here).
    let protocolErrors: [String]
    /// Per connection, keyed by its number.
    let byConnection: [String: Connection]

    enum CodingKeys: String, CodingKey {
        case connections, requests
        case openConnections = "open_connections"
        case peakOpenConnections = "peak_open_connections"
        case inProgress = "in_progress"
        case peakStreams = "peak_streams"
        case resetsSent = "resets_sent"
        case goawaysSent = "goaways_sent"
        case clientResets = "client_resets"
        case protocolErrors = "protocol_errors"
        case byConnection = "by_connection"
    }
}

// MARK: - nghttpd

/// How an ``NghttpdServer`` is configured: `nghttpd`'s options.
struct NghttpdOptions: Sendable {
    /// The certificate and key to serve over TLS (ALPN `h2` only); nil: `--no-tls` (prior knowledge only).
    var identity: TLSFixtures.Identity?
    /// `--max-concurrent-streams` (nghttpd's default is 100).
    var maxConcurrentStreams: Int?
    /// `--trailer`, one per field (`name: value`); sent only after a non-empty body.
    var trailers: [String] = []
    /// `--echo-upload`: POST and PUT bodies are sent back.
    var echoUpload = false
    /// Files of the document root, by name.
    var documents: [String: String] = [:]

    func arguments(port: Int, documentRoot: String) -> [String] {
        var arguments = ["-a", "127.0.0.1", "-d", documentRoot]
        if let maxConcurrentStreams { arguments += ["--max-concurrent-streams=\(maxConcurrentStreams)"] }
        for trailer in trailers { arguments += ["--trailer=\(trailer)"] }
        if echoUpload { arguments.append("--echo-upload") }
        if let identity {
            arguments += [String(port), identity.key, identity.chain]
        } else {
            arguments += ["--no-tls", String(port)]
        }
        return arguments
    }
}

/// Debian's `nghttpd` on 127.0.0.1, on a port picked free just before it starts (retried when another
/// process takes it first). It runs under a small shell that ends it when this process closes its stdin.
final class NghttpdServer: Sendable {
    let port: Int
    let isTLS: Bool
    /// The document root (a temporary directory, removed by ``stop()``).
    let documentRoot: String
    private let process: ProcessBox
    private let standardErrorFile: String

    private init(port: Int, isTLS: Bool, documentRoot: String, process: ProcessBox, standardErrorFile: String) {
        self.port = port
        self.isTLS = isTLS
        self.documentRoot = documentRoot
        self.process = process
        self.standardErrorFile = standardErrorFile
    }

    deinit {
        process.terminate()
        try? FileManager.default.removeItem(atPath: standardErrorFile)
        try? FileManager.default.removeItem(atPath: documentRoot)
    }

    /// Where `nghttpd` is, if installed (`make test-deps` installs it).
    static var executable: String? {
        ["/usr/sbin/nghttpd", "/usr/bin/nghttpd", "/usr/local/bin/nghttpd"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Runs nghttpd in the background and waits on it; ends it when stdin closes or on SIGTERM, and
    /// exits with its status when it exits by itself (a port taken, say). SIGKILL: nghttpd inherits the
    /// test process's blocked signals (SIGTERM and SIGINT among them) and would never see those.
    private static let supervisor = """
        exec 3<&0
        "$0" "$@" </dev/null &
        pid=$!
        trap 'kill -KILL $pid 2>/dev/null' TERM INT
        ( while read -r _; do :; done; kill -KILL $pid 2>/dev/null ) <&3 &
        wait $pid; status=$?
        wait $pid 2>/dev/null
        exit $status
        """

    func url(_ path: String = "/", host: String = "127.0.0.1") -> String {
        "\(isTLS ? "https" : "http")://\(host):\(port)\(path.hasPrefix("/") ? path : "/" + path)"
    }

    var standardError: String {
        (FileManager.default.contents(atPath: standardErrorFile) ?? Data()).text
    }

    /// Writes the documents, then starts nghttpd on a free port and waits until it accepts connections.
    static func start(_ options: NghttpdOptions, attempts: Int = 5) async throws -> NghttpdServer {
        ignoreBrokenPipes()
        guard let executable else {
            throw TLSTestInfrastructureError(description: "nghttpd is not installed (make test-deps)")
        }
        let documentRoot = FileManager.default.temporaryDirectory
            .appendingPathComponent("curlew-nghttpd-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: documentRoot, withIntermediateDirectories: true)
        for (name, text) in options.documents {
            try Data(text.utf8).write(to: URL(fileURLWithPath: documentRoot).appendingPathComponent(name))
        }
        var failures: [String] = []
        for _ in 0..<max(1, attempts) {
            let port = closedPort()
            let standardErrorFile = documentRoot + ".log"
            guard FileManager.default.createFile(atPath: standardErrorFile, contents: nil),
                let errorHandle = FileHandle(forWritingAtPath: standardErrorFile)
            else { throw TLSTestInfrastructureError(description: "cannot create \(standardErrorFile)") }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", supervisor, executable] + options.arguments(port: port, documentRoot: documentRoot)
            let box = try TLSTestScripts.launching.withLock { _ throws(any Error) in
                let input = Pipe()
                process.standardInput = input
                process.standardOutput = errorHandle
                process.standardError = errorHandle
                let box = ProcessBox(process, input: input.fileHandleForWriting)
                try process.run()
                try? errorHandle.close()
                try? input.fileHandleForReading.close()
                return box
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while box.isRunning, !canConnect(port: port), ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            if box.isRunning, canConnect(port: port) {
                return NghttpdServer(
                    port: port, isTLS: options.identity != nil, documentRoot: documentRoot, process: box,
                    standardErrorFile: standardErrorFile)
            }
            box.terminate()
            await box.waitForExit()
            failures.append("port \(port): " + (FileManager.default.contents(atPath: standardErrorFile) ?? Data()).text)
            try? FileManager.default.removeItem(atPath: standardErrorFile)
        }
        try? FileManager.default.removeItem(atPath: documentRoot)
        throw TLSTestInfrastructureError(
            description: "nghttpd did not start in \(attempts) attempts:\n" + failures.joined(separator: "\n"))
    }

    /// Stops nghttpd and removes its document root.
    func stop() async {
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning {
            process.kill()
            await process.waitForExit()
        }
        try? FileManager.default.removeItem(atPath: documentRoot)
    }
}

/// Runs `body` with a started nghttpd and always stops it.
func withNghttpd<T>(_ options: NghttpdOptions, _ body: (NghttpdServer) async throws -> T) async throws -> T {
    let server = try await NghttpdServer.start(options)
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

// MARK: - Helpers

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    return result == 0
}

/// A write to a server's stdin after it died must fail, not kill the test process.
private func ignoreBrokenPipes() {
    _ = brokenPipesIgnored
}

private let brokenPipesIgnored: Bool = {
    signal(SIGPIPE, SIG_IGN)
    return true
}()

/// Reads a process's stdout line by line on a background thread; ``next(timeout:)`` hands out the lines
/// in order.
final class LineReader: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<String?, Never>
    }

    private struct State {
        var lines: [String] = []
        var ended = false
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())  // a pthread mutex, which the thread sanitizer understands

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            // POSIX read: FileHandle.read(upToCount:) waits for the whole count or end of file.
            let descriptor = handle.fileDescriptor
            var pending = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer[..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    deliver(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            try? handle.close()
            endOfFile()
        }
    }

    private func deliver(_ line: String) {
        let waiter = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.lines.append(line)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.continuation.resume(returning: line)
    }

    private func endOfFile() {
        let waiters = state.withLock { state in
            state.ended = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// The next line; nil at end of file, or when none arrives within `timeout`.
    func next(timeout: Duration) async -> String? {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let timer = Task { [self] in
            try await Task.sleep(for: timeout)
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: nil)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let immediate = state.withLock { state -> String?? in
                if !state.lines.isEmpty { return .some(state.lines.removeFirst()) }
                if state.ended { return .some(nil) }
                state.waiters.append(Waiter(id: id, continuation: continuation))
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }
}
