// Streaming: a response read as it arrives, a request body produced while it is sent, trailers.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation
import Synchronization

let server = try await LocalHTTPServer.start { request in
    switch request.path {
    case "/export": .text(String(repeating: "id,name\n1,curlew\n", count: 10_000))
    default: .text("received \(request.body.count) bytes, checksum \(request.header("x-checksum") ?? "none")")
    }
}
let exportURL = server.url("/export")
let uploadURL = server.url("/upload")
// snippet.show

struct ExportFailed: Error { let status: Int }

let session = try CurlSession()

// A download read chunk by chunk, in bounded memory: the engine stops reading the socket while the
// closure does not read, and returning early aborts the transfer.
let lines = try await session.perform(TransportRequest(url: exportURL)) { head, body in
    guard head.status == .ok else { throw ExportFailed(status: head.status.code) }
    var lines = 0
    for try await chunk in body {
        lines += chunk.count { $0 == UInt8(ascii: "\n") }
    }
    return lines
}
print("exported \(lines) lines")

// An upload produced while it is sent: each write waits while the engine holds 1 MiB unsent
// (`SessionConfiguration.requestBodyBufferSize`).
let rows = TransportRequest.Body.stream(length: nil, replayable: true) { writer in
    for row in 0..<1_000 {
        try await writer.write("\(row),row number \(row)\n")
    }
}
let uploaded = try await session.execute(TransportRequest(url: uploadURL, method: .post, body: rows))
print(String(decoding: uploaded.body, as: UTF8.self))

// Trailer fields after the body: computed once the producer is done (here, a checksum of what it wrote).
let sum = Checksum()
let signed = TransportRequest.Body.stream { writer in
    for part in ["alpha", "beta", "gamma"] {
        sum.add(part)
        try await writer.write(part)
    }
}.trailers { [HTTPField.Name("X-Checksum")!: String(sum.value)] }
_ = try await session.execute(TransportRequest(url: uploadURL, method: .put, body: signed))

// Through a provider: the same stages as `request`, with the body handed to the closure.
enum Reports: TargetType {
    case export
    var baseURL: URL { URL(string: "https://reports.example")! }
    var path: String { "/export" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
    var validationType: ValidationType { .successCodes }
}

let provider = Provider<Reports>(
    // snippet.hide
    endpointClosure: server.endpointMapping(),
    // snippet.show
    session: session)
let bytes = try await provider.stream(.export) { response, body in
    var total = 0
    for try await chunk in body { total += chunk.count }
    return total
}
print("streamed \(bytes) bytes")
// snippet.hide
await session.shutdown()
try await server.shutdown()

/// Adds up the bytes written (a stand-in for a real digest).
final class Checksum: Sendable {
    private let total = Mutex(0)
    func add(_ text: String) { total.withLock { $0 = ($0 &+ text.utf8.reduce(0) { $0 &+ Int($1) }) & 0xFFFF } }
    var value: Int { total.withLock { $0 } }
}
