// Curlew — what the OpenAPI transport's tests share: the generated client on a session of its own against
// openapi_server.py, and the Curlew error inside the runtime's ClientError.

import Curlew
import CurlewEngine
import CurlewOpenAPI
import CurlewTestSupport
import Foundation
import HTTPTypes
import OpenAPIFixture
import OpenAPIRuntime
import Testing

/// The generated client over a `CurlewTransport` on a fresh session, against the shared server.
struct Fixture {
    let server: OpenAPITestServer
    let session: CurlSession
    let transport: CurlewTransport
    let client: Client
}

/// Runs `body` with the generated client on a session of its own (shut down at the end) through `middleware`.
func withClient<T>(
    session configuration: SessionConfiguration = SessionConfiguration(), middleware: [any TransportMiddleware] = [],
    transport transportConfiguration: CurlewTransport.Configuration = CurlewTransport.Configuration(),
    _ body: (Fixture) async throws -> T
) async throws -> T {
    let server = try await OpenAPITestServer.shared()
    let session = try CurlSession(configuration: configuration)
    let transport = CurlewTransport(session, middleware: middleware, configuration: transportConfiguration)
    let client = Client(serverURL: server.serverURL, transport: transport)
    return try await ensuring(
        { try await body(Fixture(server: server, session: session, transport: transport, client: client)) },
        cleanUp: { await session.shutdown() })
}

/// The `CurlewError` a generated client's call threw (the runtime wraps it in its `ClientError`).
func curlewError(_ error: (any Error)?, sourceLocation: SourceLocation = #_sourceLocation) -> CurlewError? {
    if let error = error as? CurlewError { return error }
    guard let client = error as? ClientError, let underlying = client.underlyingError as? CurlewError else {
        Issue.record("expected a CurlewError inside a ClientError, got \(String(describing: error))", sourceLocation: sourceLocation)
        return nil
    }
    return underlying
}

/// The transport failure a generated client's call threw.
func transportError(_ error: (any Error)?, sourceLocation: SourceLocation = #_sourceLocation) -> TransportError? {
    guard let error = curlewError(error, sourceLocation: sourceLocation) else { return nil }
    guard case .transport(let failure) = error else {
        Issue.record("expected CurlewError.transport, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
    return failure
}

/// Byte `index` of the server's `/download` pattern.
@inline(__always) func patternByte(_ index: Int) -> UInt8 { UInt8(index % 251) }

/// The SHA-256 of `bytes` in hex, as the server reports it (computed by Python: `hashlib`).
func sha256Hex(_ bytes: [UInt8]) async throws -> String {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-sha-\(UUID().uuidString)")
    try Data(bytes).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let completion = try await TestProcess.run(
        executable: "/usr/bin/env",
        arguments: ["python3", "-c", "import hashlib,sys;print(hashlib.sha256(open(sys.argv[1],'rb').read()).hexdigest())", file.path],
        timeout: .seconds(30))
    return String(decoding: completion.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Deterministic bytes that do not repeat in small cycles.
func sampleBytes(_ count: Int, seed: UInt32 = 7) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}
