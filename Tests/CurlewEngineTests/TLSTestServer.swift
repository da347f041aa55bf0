// Curlew — real TLS servers on loopback for the engine's tests, with certificates made at test time.
//
// `TLSFixtures.shared()` runs Tests/Servers/tls_fixtures.py once per test process into a fresh
// temporary directory (removed at exit); `TLSTestServer.start(_:)` runs Tests/Servers/tls_server.py on
// a free port and stops it with `stop()`. Both need `python3` with the `cryptography` package (set
// CURLEW_TEST_PYTHON to use another interpreter) and the `openssl` command.

import CurlewEngine
import Foundation
import Synchronization

/// A failure of the TLS test infrastructure itself (Python missing, a script failing, a timeout).
struct TLSTestInfrastructureError: Error, CustomStringConvertible {
    let description: String
}

/// Where the helper scripts live: Tests/Servers, next to this test target's folder.
enum TLSTestScripts {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Servers")
    static let fixtures = directory.appendingPathComponent("tls_fixtures.py").path
    static let server = directory.appendingPathComponent("tls_server.py").path

    /// The interpreter: `CURLEW_TEST_PYTHON`, else `python3` from the `PATH`.
    static var python: [String] {
        [ProcessInfo.processInfo.environment["CURLEW_TEST_PYTHON"] ?? "python3"]
    }

    /// Held while a child is launched, from creating its pipes to closing the parent's copies of the
    /// child's ends. Foundation gives each child descriptors that are not close-on-exec (its pipes and
    /// the socket through which it learns that the child exited); a child launched at the same moment
    /// from another thread would inherit them, and then a server would not see its stdin close, or
    /// Foundation would not notice a child's exit until the other child exits too.
    /// An `Int` rather than `Void`: the thread sanitizer has reported the inout access to a zero-sized
    /// state under this lock as a race (the access's address is the object's own).
    static let launching = Locked(0)

    /// A process running `python3 arguments…` through `/usr/bin/env`.
    static func pythonProcess(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = python + arguments
        return process
    }
}

// MARK: - Fixtures

/// The certificates, keys and pins `tls_fixtures.py` made for this test process. Every path is absolute.
struct TLSFixtures: Sendable {
    /// A certificate and its private key (PEM files). `chain` is what a server presents: the
    /// certificate followed by its intermediates (the certificate alone when it has none).
    struct Identity: Sendable, Hashable {
        let certificate: String
        let key: String
        let chain: String
    }

    /// SPKI pins in libcurl's `CURLOPT_PINNEDPUBLICKEY` form, `sha256//<base64>`.
    struct Pins: Sendable, Hashable {
        let leaf: String
        let intermediate: String
        let ca: String
        /// Every certificate's pin, by fixture name (`leaf_via_intermediate`, `self_signed`, …).
        let all: [String: String]
    }

    /// The directory holding every file.
    let directory: String
    /// The root CA every trusted certificate chains to.
    let ca: Identity
    /// A directory holding `ca` under its OpenSSL subject hash (`<hash>.0`), for CAPATH.
    let caHashedDirectory: String
    /// The CA's OpenSSL subject hash (`openssl x509 -hash`).
    let caSubjectHash: String
    /// `localhost`, `127.0.0.1`, `a.test` and `*.a.test`, signed by ``ca``.
    let leaf: Identity
    /// An intermediate CA (pathlen 0) signed by ``ca``.
    let intermediate: Identity
    /// `localhost` and `127.0.0.1`, signed by ``intermediate``; its `chain` includes the intermediate.
    let leafViaIntermediate: Identity
    /// `localhost` and `127.0.0.1`, its own issuer.
    let selfSigned: Identity
    /// `localhost` and `127.0.0.1`, signed by ``ca``, expired yesterday.
    let expired: Identity
    /// `localhost` and `127.0.0.1`, signed by ``ca``, valid from tomorrow.
    let notYetValid: Identity
    /// `other.example` only, signed by ``ca``.
    let wrongHost: Identity
    /// A client certificate (clientAuth, CN `curlew-test-client`) signed by ``ca``.
    let client: Identity
    /// ``client``'s key, encrypted (PKCS#8) with ``clientKeyPassword``.
    let clientKeyEncrypted: String
    /// The password of ``clientKeyEncrypted``.
    let clientKeyPassword: String
    /// A second root CA, unrelated to ``ca``.
    let otherCA: Identity
    /// A client certificate (CN `curlew-untrusted-client`) signed by ``otherCA``.
    let clientUntrusted: Identity
    /// A root CA with a P-384 key (signing with ECDSA-SHA384).
    let caP384: Identity
    /// `localhost` and `127.0.0.1`, a P-384 key, signed by ``caP384``: a full handshake costs about
    /// 1.5 ms more than with the P-256 certificates, which a resumed handshake skips.
    let leafP384: Identity
    /// The SPKI pins.
    let pins: Pins

    /// The CN of ``client``.
    static let clientCommonName = "curlew-test-client"

    // `Locked` (a pthread mutex), not `Mutex`: the thread sanitizer cannot see `Mutex`'s futex and
    // reported the first concurrent calls from several suites as a race.
    private static let cache = Locked<Task<TLSFixtures, any Error>?>(nil)
    private static let directoryToRemove = Locked<String?>(nil)

    /// The fixtures of this test process, made on first use (in a fraction of a second) and shared.
    static func shared() async throws -> TLSFixtures {
        let task = cache.withLock { cached in
            if let cached { return cached }
            let task = Task { try await generate() }
            cached = task
            return task
        }
        return try await task.value
    }

    private static func generate() async throws -> TLSFixtures {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("curlew-tls-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        directoryToRemove.withLock { $0 = directory }
        atexit { TLSFixtures.removeDirectory() }
        let output = try await ProcessRunner.run(
            TLSTestScripts.pythonProcess([TLSTestScripts.fixtures, directory]), timeout: .seconds(30))
        guard output.status == 0 else {
            throw TLSTestInfrastructureError(
                description: "tls_fixtures.py failed (exit \(output.status)): \(output.standardError)")
        }
        do {
            return try TLSFixtures(manifest: JSONDecoder().decode(Manifest.self, from: output.standardOutput))
        } catch {
            throw TLSTestInfrastructureError(
                description: "tls_fixtures.py printed an unexpected manifest (\(error)): \(output.standardOutput.text)")
        }
    }

    private static func removeDirectory() {
        guard let directory = directoryToRemove.withLock({ $0 }) else { return }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// What `tls_fixtures.py` prints.
    private struct Manifest: Decodable {
        let directory: String
        let files: [String: String]
        let pins: [String: String]
        let clientKeyPassword: String
        let caSubjectHash: String

        enum CodingKeys: String, CodingKey {
            case directory, files, pins
            case clientKeyPassword = "client_key_password"
            case caSubjectHash = "ca_subject_hash"
        }

        func file(_ name: String) throws -> String {
            guard let path = files[name] else {
                throw TLSTestInfrastructureError(description: "tls_fixtures.py wrote no `\(name)`")
            }
            return path
        }

        func pin(_ name: String) throws -> String {
            guard let pin = pins[name] else {
                throw TLSTestInfrastructureError(description: "tls_fixtures.py printed no pin for `\(name)`")
            }
            return pin
        }

        func identity(_ name: String) throws -> Identity {
            let certificate = try file(name)
            return Identity(certificate: certificate, key: try file(name + ".key"), chain: files[name + ".chain"] ?? certificate)
        }
    }

    private init(manifest: Manifest) throws {
        directory = manifest.directory
        ca = try manifest.identity("ca")
        caHashedDirectory = try manifest.file("ca.hashed")
        caSubjectHash = manifest.caSubjectHash
        leaf = try manifest.identity("leaf")
        intermediate = try manifest.identity("intermediate")
        leafViaIntermediate = try manifest.identity("leaf_via_intermediate")
        selfSigned = try manifest.identity("self_signed")
        expired = try manifest.identity("expired")
        notYetValid = try manifest.identity("not_yet_valid")
        wrongHost = try manifest.identity("wrong_host")
        client = try manifest.identity("client")
        clientKeyEncrypted = try manifest.file("client.key.encrypted")
        clientKeyPassword = manifest.clientKeyPassword
        otherCA = try manifest.identity("other_ca")
        clientUntrusted = try manifest.identity("client_untrusted")
        caP384 = try manifest.identity("ca_p384")
        leafP384 = try manifest.identity("leaf_p384")
        pins = Pins(
            leaf: try manifest.pin("leaf"), intermediate: try manifest.pin("intermediate"), ca: try manifest.pin("ca"),
            all: manifest.pins)
    }
}

// MARK: - Server

/// How a ``TLSTestServer`` is configured: the command-line options of `tls_server.py`.
struct TLSServerOptions: Sendable {
    enum TLSVersion: String, Sendable {
        case v1_2 = "1.2"
        case v1_3 = "1.3"
    }

    /// The PEM certificate the server presents, optionally followed by its intermediates.
    var certificate: String
    /// The certificate's unencrypted PEM key.
    var key: String
    /// Intermediates sent after ``certificate`` (`--chain`).
    var chain: String? = nil
    /// CA file client certificates are verified with; setting it makes the server ask for one.
    var clientCA: String? = nil
    /// Refuse clients without a valid certificate (else a client certificate is optional).
    var requireClientCertificate = false
    var minimumTLSVersion: TLSVersion? = nil
    var maximumTLSVersion: TLSVersion? = nil
    /// ALPN protocols to advertise; empty: no ALPN.
    var alpn: [String] = []
    /// Whether session tickets are issued. Off: no resumption over TLS 1.3; TLS 1.2 can still resume
    /// by session ID.
    var sessionTickets = true
    /// Whether sessions can be resumed at all; false gives every connection a fresh TLS context.
    var resumption = true
    /// Paths answered with `302 Found` and `Location:` the URL (`--redirect PATH=URL`), query ignored.
    var redirects: [String: String] = [:]
    /// Log requests and handshake failures to the server's stderr (see ``TLSTestServer/standardError``).
    var verbose = false

    /// Serves `certificate` with `key`.
    init(certificate: String, key: String) {
        self.certificate = certificate
        self.key = key
    }

    /// Serves a fixture identity, with its chain (``TLSFixtures/Identity/chain``).
    init(serving identity: TLSFixtures.Identity) {
        self.init(certificate: identity.chain, key: identity.key)
    }

    var arguments: [String] {
        var arguments = ["--cert", certificate, "--key", key]
        if let chain { arguments += ["--chain", chain] }
        if let clientCA { arguments += ["--client-ca", clientCA] }
        if requireClientCertificate { arguments.append("--require-client-cert") }
        if let minimumTLSVersion { arguments += ["--tls-min", minimumTLSVersion.rawValue] }
        if let maximumTLSVersion { arguments += ["--tls-max", maximumTLSVersion.rawValue] }
        for protocolName in alpn { arguments += ["--alpn", protocolName] }
        if !sessionTickets { arguments += ["--session-tickets", "off"] }
        if !resumption { arguments.append("--no-resumption") }
        for (path, url) in redirects.sorted(by: { $0.key < $1.key }) { arguments += ["--redirect", "\(path)=\(url)"] }
        if verbose { arguments.append("--verbose") }
        return arguments
    }
}

/// `tls_server.py` running on 127.0.0.1: HTTPS/1.1 with keep-alive, answering every request with a
/// JSON report of the connection (``TLSEcho``). A request to `/close` is answered with
/// `Connection: close`, so the next request needs a new connection (and can resume the TLS session);
/// a query `delay=MS` on any path delays the answer, so that requests overlap.
///
/// Call ``stop()`` when done (``withTLSTestServer(_:_:)`` does). The server also exits when this
/// process does: it watches its stdin, a pipe only this process writes to.
final class TLSTestServer: Sendable {
    /// Which host name a URL uses; the fixture leaves carry both as subject alternative names.
    enum Host: String, Sendable {
        case ipv4 = "127.0.0.1"
        case localhost = "localhost"
    }

    /// The port the server listens on.
    let port: Int
    private let process: ProcessBox
    private let standardErrorFile: String

    private init(port: Int, process: ProcessBox, standardErrorFile: String) {
        self.port = port
        self.process = process
        self.standardErrorFile = standardErrorFile
    }

    deinit {
        process.terminate()
        try? FileManager.default.removeItem(atPath: standardErrorFile)
    }

    /// `https://127.0.0.1:PORT/path` (or `https://localhost:PORT/path`).
    func url(_ path: String = "/", host: Host = .ipv4) -> String {
        "https://\(host.rawValue):\(port)\(path.hasPrefix("/") ? path : "/" + path)"
    }

    /// What the server wrote to stderr so far (only with ``TLSServerOptions/verbose``, or errors).
    var standardError: String {
        (FileManager.default.contents(atPath: standardErrorFile) ?? Data()).text
    }

    /// Whether the server process is still running.
    var isRunning: Bool { process.isRunning }

    /// Starts a server and waits (up to `timeout`) for the port it listens on.
    ///
    /// - Throws: ``TLSTestInfrastructureError`` with the server's stderr when Python or the script
    ///   fails, or no port arrives in time.
    static func start(_ options: TLSServerOptions, timeout: Duration = .seconds(15)) async throws -> TLSTestServer {
        let standardErrorFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("curlew-tls-server-\(getpid())-\(UUID().uuidString.prefix(8)).log").path
        guard FileManager.default.createFile(atPath: standardErrorFile, contents: nil),
            let errorHandle = FileHandle(forWritingAtPath: standardErrorFile)
        else {
            throw TLSTestInfrastructureError(description: "cannot create \(standardErrorFile)")
        }
        let process = TLSTestScripts.pythonProcess([TLSTestScripts.server] + options.arguments)
        let (box, output) = try TLSTestScripts.launching.withLock { _ throws(TLSTestInfrastructureError) in
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
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
            // The child holds its own copies now; ours would keep the pipes open after it exits.
            try? input.fileHandleForReading.close()
            try? output.fileHandleForWriting.close()
            return (box, output)
        }

        let line = await PortLineReader.firstLine(from: output.fileHandleForReading, timeout: timeout, process: box)
        func failure(_ reason: String) -> TLSTestInfrastructureError {
            box.terminate()
            let log = (FileManager.default.contents(atPath: standardErrorFile) ?? Data()).text
            try? FileManager.default.removeItem(atPath: standardErrorFile)
            return TLSTestInfrastructureError(
                description: "tls_server.py \(options.arguments.joined(separator: " ")): \(reason)\n"
                    + "stderr:\n\(log.isEmpty ? "(empty)" : log)")
        }
        switch line {
        case .failure(let error):
            throw failure(error.description)
        case .success(let text):
            struct PortLine: Decodable { let port: Int }
            guard let decoded = try? JSONDecoder().decode(PortLine.self, from: Data(text.utf8)), decoded.port > 0
            else { throw failure("expected {\"port\": N}, got \(text.debugDescription)") }
            return TLSTestServer(port: decoded.port, process: box, standardErrorFile: standardErrorFile)
        }
    }

    /// Stops the server: closes its stdin, sends SIGTERM and waits for it to exit (SIGKILL after 5 s).
    func stop() async {
        process.terminate()
        if await !waitForExit(timeout: .seconds(5)) {
            process.kill()
            await process.waitForExit()
        }
    }

    /// Closes the server's stdin only, which it treats as the request to exit.
    func closeStandardInput() {
        process.closeInput()
    }

    /// Waits for the server process to exit; returns false if it is still running after `timeout`.
    func waitForExit(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return !process.isRunning
    }
}

extension TLSTestServer {
    private static let sharedServers = Mutex<[[String]: Task<TLSTestServer, any Error>]>([:])
    private static let startedSharedServers = Mutex<[TLSTestServer]>([])

    /// A server for `options` shared by every test of this process that asks for the same options,
    /// started on first use and stopped when the process exits, so that not every test runs a Python
    /// process of its own. Its connection numbers and counts include other tests' connections.
    static func shared(_ options: TLSServerOptions) async throws -> TLSTestServer {
        let task = sharedServers.withLock { servers in
            if let task = servers[options.arguments] { return task }
            if servers.isEmpty { atexit { TLSTestServer.stopSharedServers() } }
            let task = Task {
                let server = try await TLSTestServer.start(options)
                startedSharedServers.withLock { $0.append(server) }
                return server
            }
            servers[options.arguments] = task
            return task
        }
        return try await task.value
    }

    /// Ends the shared servers (they would also exit once this process's end closes their stdin) and
    /// removes their logs.
    private static func stopSharedServers() {
        let servers = startedSharedServers.withLock { servers in
            defer { servers = [] }
            return servers
        }
        for server in servers {
            server.process.terminate()
            try? FileManager.default.removeItem(atPath: server.standardErrorFile)
        }
    }
}

/// Runs `body` with a started server and always stops it.
func withTLSTestServer<T>(
    _ options: TLSServerOptions, _ body: (TLSTestServer) async throws -> T
) async throws -> T {
    let server = try await TLSTestServer.start(options)
    return try await ensuring({ try await body(server) }, cleanUp: { await server.stop() })
}

/// The JSON body `tls_server.py` answers every request with.
struct TLSEcho: Decodable, Sendable, Hashable {
    let method: String
    /// The request target, query included.
    let path: String
    /// `TLSv1.2` or `TLSv1.3`.
    let tlsVersion: String
    let cipher: String?
    /// The ALPN protocol agreed on, if any.
    let alpn: String?
    /// The server name the client sent (SNI); nil for an IP address.
    let serverName: String?
    /// Whether this connection's TLS session was resumed.
    let sessionReused: Bool
    /// The common name of the client certificate, if one was presented and verified.
    let clientCertificateCommonName: String?
    /// This connection's number, from 1 in accept order.
    let connection: Int
    /// How many connections the server had accepted when it answered.
    let connections: Int
    /// This request's number on its connection, from 1.
    let request: Int
    /// The request body's length.
    let bodyLength: Int

    enum CodingKeys: String, CodingKey {
        case method, path, cipher, alpn, connection, connections, request
        case tlsVersion = "tls_version"
        case serverName = "sni"
        case sessionReused = "session_reused"
        case clientCertificateCommonName = "client_cert_cn"
        case bodyLength = "body_length"
    }

    /// Parses a body from `tls_server.py`.
    init(_ body: Data) throws {
        self = try JSONDecoder().decode(TLSEcho.self, from: body)
    }

    /// Parses the body of a response from `tls_server.py`.
    init(_ response: TransportResponse) throws {
        try self.init(response.body)
    }
}

// MARK: - Processes

/// A `Process` shared between the test and Foundation's termination callback (also used by the HTTP/2
/// servers' wrappers).
///
/// Foundation learns that a child exited when a socket the child inherited closes; should another
/// child have inherited that socket too (launched at the same moment, see
/// ``TLSTestScripts/launching``), the termination handler waits for that one as well, and a test
/// waiting for a short-lived child would wait for a server that lives as long as the test process
/// (seen: a zombie `tls_server.py` and a test that never ended). So an exit is also recognised from
/// `/proc`: a child that is a zombie, or gone, has exited.
final class ProcessBox: Sendable {
    private struct State {
        var input: FileHandle?
        var exited = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let process: Process
    private let state: Locked<State>  // a pthread mutex, which the thread sanitizer understands

    init(_ process: Process, input: FileHandle?) {
        self.process = process
        state = Locked(State(input: input))
        process.terminationHandler = { [weak self] _ in self?.markExited() }
    }

    var isRunning: Bool {
        if state.withLock({ $0.exited }) { return false }
        let pid = process.processIdentifier
        guard pid > 0, Self.hasEnded(pid) else { return true }
        markExited()
        return false
    }

    /// Whether the child `pid` is a zombie or no longer exists.
    private static func hasEnded(_ pid: Int32) -> Bool {
        guard let stat = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return true }
        // "pid (command) S ...": the state follows the last ')'.
        guard let close = stat.lastIndex(of: UInt8(ascii: ")")), close + 2 < stat.endIndex else { return false }
        return stat[close + 2] == UInt8(ascii: "Z")
    }

    private func markExited() {
        let waiters = state.withLock { state in
            state.exited = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Writes to the process's stdin; false once it is closed or the write fails.
    @discardableResult
    func write(_ text: String) -> Bool {
        state.withLock { state in
            guard let input = state.input else { return false }
            do {
                try input.write(contentsOf: Data(text.utf8))
                return true
            } catch {
                return false
            }
        }
    }

    func closeInput() {
        let input = state.withLock { state in
            defer { state.input = nil }
            return state.input
        }
        try? input?.close()
    }

    /// Closes stdin and sends SIGTERM, unless the process has exited.
    func terminate() {
        closeInput()
        if isRunning, process.processIdentifier > 0 { Foundation.kill(process.processIdentifier, SIGTERM) }
    }

    /// Sends SIGKILL, unless the process has exited.
    func kill() {
        if isRunning, process.processIdentifier > 0 { Foundation.kill(process.processIdentifier, SIGKILL) }
    }

    func waitForExit() async {
        // Polls `/proc` meanwhile, in case the termination handler is never called.
        let poller = Task.detached { [weak self] in
            while let box = self, box.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.exited { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
        poller.cancel()
    }
}

/// Reads the server's first stdout line on a background thread, with a timeout.
private enum PortLineReader {
    typealias Outcome = Result<String, TLSTestInfrastructureError>

    static func firstLine(from handle: FileHandle, timeout: Duration, process: ProcessBox) async -> Outcome {
        let pending = Mutex<CheckedContinuation<Outcome, Never>?>(nil)
        let finish: @Sendable (Outcome) -> Void = { outcome in
            pending.withLock { pending in
                defer { pending = nil }
                return pending
            }?.resume(returning: outcome)
        }
        let timer = Mutex<Task<Void, any Error>?>(nil)
        defer { timer.withLock { $0?.cancel() } }
        return await withCheckedContinuation { continuation in
            pending.withLock { $0 = continuation }
            timer.withLock {
                $0 = Task {
                    try await Task.sleep(for: timeout)
                    finish(.failure(TLSTestInfrastructureError(description: "printed no port within \(timeout)")))
                    // Killing the server ends a reader still waiting (end of file).
                    process.terminate()
                }
            }
            Thread.detachNewThread {
                // POSIX read: FileHandle.read(upToCount:) waits for the whole count or end of file.
                let descriptor = handle.fileDescriptor
                var line = [UInt8]()
                var buffer = [UInt8](repeating: 0, count: 256)
                while !line.contains(UInt8(ascii: "\n")) {
                    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else {
                        finish(.failure(TLSTestInfrastructureError(description: "exited before printing its port")))
                        return
                    }
                    line += buffer[..<count]
                }
                line = Array(line.prefix { $0 != UInt8(ascii: "\n") })
                finish(.success(String(decoding: line, as: UTF8.self)))
            }
        }
    }
}

/// Runs a process to completion, collecting its output in temporary files (no pipe can fill up).
private enum ProcessRunner {
    struct Output {
        let status: Int32
        let standardOutput: Data
        let standardError: String
    }

    static func run(_ process: Process, timeout: Duration) async throws -> Output {
        let base = FileManager.default.temporaryDirectory
            .appendingPathComponent("curlew-process-\(getpid())-\(UUID().uuidString.prefix(8))").path
        let outputPath = base + ".out"
        let errorPath = base + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            FileManager.default.createFile(atPath: errorPath, contents: nil),
            let output = FileHandle(forWritingAtPath: outputPath), let error = FileHandle(forWritingAtPath: errorPath)
        else { throw TLSTestInfrastructureError(description: "cannot create \(base).out/.err") }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = error
        let box = ProcessBox(process, input: nil)
        try TLSTestScripts.launching.withLock { _ throws(TLSTestInfrastructureError) in
            do {
                try process.run()
            } catch {
                throw TLSTestInfrastructureError(description: "cannot run \(process.arguments?.first ?? "?"): \(error)")
            }
        }
        try? output.close()
        try? error.close()
        let timer = Task {
            try await Task.sleep(for: timeout)
            box.terminate()
        }
        await box.waitForExit()
        timer.cancel()
        return Output(
            status: await exitStatus(of: process),
            standardOutput: FileManager.default.contents(atPath: outputPath) ?? Data(),
            standardError: (FileManager.default.contents(atPath: errorPath) ?? Data()).text)
    }

    /// The exit status of a child that has exited, also when Foundation has not noticed yet (see
    /// ProcessBox); -1 when it did not exit normally.
    private static func exitStatus(of process: Process) async -> Int32 {
        if !process.isRunning { return process.terminationStatus }
        // Still a zombie: read its status without reaping it (Foundation still will).
        var info = siginfo_t()
        let pid = process.processIdentifier
        if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid == pid {
            return info.si_code == CLD_EXITED ? info._sifields._sigchld.si_status : -1
        }
        // Reaped already: Foundation is about to say so.
        let deadline = ContinuousClock.now + .seconds(2)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return process.isRunning ? -1 : process.terminationStatus
    }
}

