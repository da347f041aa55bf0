// Curlew — helpers shared by the engine tests.

import CurlewEngine
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// Runs `body` with a fresh server and session, and always stops both.
func withServerAndSession<T>(
    configuration: SessionConfiguration = SessionConfiguration(),
    handler: @escaping @Sendable (ServerRequest) async -> ServerReply,
    _ body: (LocalHTTPServer, CurlSession) async throws -> T
) async throws -> T {
    let server = try await LocalHTTPServer.start(handler: handler)
    let session = try CurlSession(configuration: configuration)
    do {
        let result = try await body(server, session)
        await session.shutdown()
        try await server.shutdown()
        return result
    } catch {
        await session.shutdown()
        try await server.shutdown()
        throw error
    }
}

/// Expects `operation` to throw a TransportError and returns it.
func transportError(
    _ operation: () async throws -> TransportResponse, sourceLocation: SourceLocation = #_sourceLocation
) async -> TransportError? {
    do {
        let response = try await operation()
        Issue.record("expected a TransportError, got status \(response.status.code)", sourceLocation: sourceLocation)
        return nil
    } catch let error as TransportError {
        return error
    } catch {
        Issue.record("expected a TransportError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Runs `body`, then `cleanUp` whether `body` returned or threw (`defer` cannot await).
func ensuring<T>(_ body: () async throws -> T, cleanUp: () async -> Void) async throws -> T {
    do {
        let result = try await body()
        await cleanUp()
        return result
    } catch {
        await cleanUp()
        throw error
    }
}

/// Polls `condition` every 10 ms for up to `seconds`; returns whether it became true. The default bound
/// is generous because it only matters when a test fails: the sanitizer build on a loaded 2-core
/// machine can take several seconds for what is otherwise instant.
func eventually(within seconds: Double = 20, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// Heavy tests (thousands of sockets) are skipped under the thread sanitizer (`make test-tsan`).
let heavyTestsDisabled = ProcessInfo.processInfo.environment["CURLEW_SKIP_HEAVY"] == "1"

extension Data {
    var text: String { String(decoding: self, as: UTF8.self) }
}

/// Whether the thread with this kernel id still exists in this process.
func threadIsAlive(_ id: Int32) -> Bool {
    id > 0 && FileManager.default.fileExists(atPath: "/proc/self/task/\(id)")
}

/// A loopback port with nothing listening on it.
func closedPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}
