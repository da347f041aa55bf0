// Curlew — request bodies compressed before they are sent, checked by stream_server.py's `/inflate`, which
// undoes the coding and reports the decoded bytes' length and SHA-256: every body kind with gzip and
// deflate at several levels, framing, 307 replays, and what is left alone.

@testable import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// What `/inflate` reports about the body it received.
struct InflateReport: Decodable, Equatable {
    let method: String
    let contentEncoding: String?
    let contentLength: Int?
    let transferEncoding: String?
    /// Bytes received (before decoding).
    let wireLength: Int
    let decodedLength: Int
    /// SHA-256 of the decoded bytes, in hex.
    let sha256: String
    let crc32: UInt32
    /// The coding's stream ended exactly at the body's end.
    let complete: Bool
    let error: String?
    let connection: Int
    let request: Int

    enum CodingKeys: String, CodingKey {
        case method, sha256, crc32, complete, error, connection, request
        case contentEncoding = "content_encoding"
        case contentLength = "content_length"
        case transferEncoding = "transfer_encoding"
        case wireLength = "wire_length"
        case decodedLength = "decoded_length"
    }

    init(_ response: TransportResponse) throws {
        self = try JSONDecoder().decode(InflateReport.self, from: response.body)
    }
}

/// The server's digest of `payload` sent as it is: what every compressed upload of it must decode to.
func plainDigest(of payload: [UInt8], server: StreamTestServer, session: CurlSession) async throws -> String {
    let response = try await session.execute(TransportRequest(url: server.url("/inflate"), method: .post, body: .bytes(payload)))
    let report = try InflateReport(response)
    #expect(report.contentEncoding == nil)
    #expect(report.decodedLength == payload.count)
    return report.sha256
}

/// The body kinds compression handles, each sending the same payload.
enum CompressedBodyKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case data, file, segments, streamWithLength, streamWithoutLength, replayableSequence

    var testDescription: String { rawValue }

    /// Whether the engine compresses it up front (and so knows its compressed length).
    var isInMemory: Bool { self == .data }

    func body(_ payload: [UInt8], file: String) throws -> TransportRequest.Body {
        let pieces = stride(from: 0, to: payload.count, by: 30_000).map { Array(payload[$0..<min($0 + 30_000, payload.count)]) }
        let produce: @Sendable (RequestBodyWriter) async throws -> Void = { writer in
            for piece in pieces { try await writer.write(piece) }
        }
        switch self {
        case .data: return .data(Data(payload))
        case .file: return try .file(file)
        case .segments:
            // Bytes, then the rest from the file (a multipart form's shape).
            let pieces: [TransportRequest.Body] = [.bytes(payload.prefix(1000)), try .file(file, range: 1000..<payload.count)]
            guard let body = TransportRequest.Body.concatenating(pieces) else { throw CocoaError(.fileReadUnknown) }
            return body
        case .streamWithLength: return .stream(length: payload.count, produce)
        case .streamWithoutLength: return .stream(produce)
        case .replayableSequence: return .sequence(length: payload.count) { pieces.async }
        }
    }
}

extension Array where Element: Sendable {
    /// The elements as an async sequence.
    fileprivate var async: AsyncStream<Element> {
        AsyncStream { continuation in
            for element in self { continuation.yield(element) }
            continuation.finish()
        }
    }
}

/// A payload that compresses (text-like, with repeats) but is not one short period.
private func compressiblePayload(_ count: Int) -> [UInt8] {
    var generator = SplitMix(seed: 15)
    let words = (0..<64).map { _ in (0..<Int(generator.next() % 9 + 2)).map { _ in UInt8(97 + generator.next() % 26) } }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 16)
    while bytes.count < count {
        bytes += words[Int(generator.next() % 64)]
        bytes.append(0x20)
    }
    return Array(bytes.prefix(count))
}

/// A small deterministic generator, so payloads are the same on every run.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A request to `url` with `body`, compressed as `compression` says.
private func compressed(
    _ url: String, _ body: TransportRequest.Body, _ compression: RequestCompression, method: HTTPRequest.Method = .post
) -> TransportRequest {
    var request = TransportRequest(url: url, method: method, body: body)
    request.options.requestCompression = compression
    return request
}

@Suite struct RequestCompressionTests {
    static let compressions: [RequestCompression] = [.gzip(), .deflate(), .gzip(level: 1), .deflate(level: 9), .gzip(level: 0)]

    /// Each kind of body arrives compressed and decodes to the payload exactly; bodies in memory carry
    /// their compressed length, files and streams go chunked.
    @Test(arguments: CompressedBodyKind.allCases, compressions)
    func everyBodyKindArrivesCompressedAndDecodesExactly(kind: CompressedBodyKind, compression: RequestCompression) async throws {
        let payload = compressiblePayload(300_000)
        try await withScratchDirectory { directory in
            let file = directory + "/body.txt"
            try Data(payload).write(to: URL(fileURLWithPath: file))
            try await withStreamServerAndSession(.http1) { server, session in
                let digest = try await plainDigest(of: payload, server: server, session: session)
                let response = try await session.execute(
                    compressed(server.url("/inflate"), try kind.body(payload, file: file), compression, method: .put))
                let report = try InflateReport(response)
                #expect(report.method == "PUT")
                #expect(report.contentEncoding == compression.coding.rawValue)
                #expect(report.error == nil)
                #expect(report.complete)
                #expect(report.decodedLength == payload.count)
                #expect(report.sha256 == digest)
                if kind.isInMemory {
                    #expect(report.contentLength == report.wireLength)
                    #expect(report.transferEncoding == nil)
                } else {
                    #expect(report.contentLength == nil)
                    #expect(report.transferEncoding == "chunked")
                }
                if compression.level == 0 {
                    #expect(report.wireLength > payload.count)
                } else {
                    #expect(report.wireLength < payload.count / 2)
                }
            }
        }
    }

    /// Over HTTP/2 too (no chunked framing there): bytes, a file and a stream.
    @Test(arguments: [CompressedBodyKind.data, .file, .streamWithoutLength])
    func compressedBodiesDecodeExactlyOverHTTP2(kind: CompressedBodyKind) async throws {
        let payload = compressiblePayload(200_000)
        try await withScratchDirectory { directory in
            let file = directory + "/body.txt"
            try Data(payload).write(to: URL(fileURLWithPath: file))
            try await withStreamServerAndSession(.http2) { server, session in
                let digest = try await plainDigest(of: payload, server: server, session: session)
                let response = try await session.execute(compressed(server.url("/inflate"), try kind.body(payload, file: file), .deflate()))
                // Where uploads through the read callback stall over HTTP/2 or drop another stream's bytes (CurlQuirks.callbackUploadsAvoidHTTP2),
                // files and streams go over HTTP/1.1.
                let readByCallback = !kind.isInMemory
                #expect(response.httpVersion == (readByCallback && CurlQuirks.current.callbackUploadsAvoidHTTP2 ? .http1_1 : .http2))
                let report = try InflateReport(response)
                #expect(report.contentEncoding == "deflate")
                #expect(report.complete)
                #expect(report.sha256 == digest)
                #expect(report.contentLength == (kind.isInMemory ? report.wireLength : nil))
            }
        }
    }

    /// A 307 sends the body again, compressed again from its first byte: both hops decode to the payload.
    @Test(arguments: [CompressedBodyKind.file, .replayableSequence, .data])
    func a307ReplaysACompressedBodyWhole(kind: CompressedBodyKind) async throws {
        let payload = compressiblePayload(250_000)
        try await withScratchDirectory { directory in
            let file = directory + "/body.txt"
            try Data(payload).write(to: URL(fileURLWithPath: file))
            try await withStreamServerAndSession(.http1) { server, session in
                let digest = try await plainDigest(of: payload, server: server, session: session)
                let key = UUID().uuidString
                let url = server.url("/inflate?key=\(key)&status=307&to=/inflate%3Fkey%3D\(key)")
                let response = try await session.execute(compressed(url, try kind.body(payload, file: file), .gzip()))
                #expect(response.status.code == 200)
                #expect(response.redirects.map(\.status.code) == [307])
                let hops = try await serverLog(server, session, key: key, as: InflateReport.self)
                #expect(hops.count == 2)
                #expect(hops.map(\.contentEncoding) == ["gzip", "gzip"])
                #expect(hops.map(\.complete) == [true, true])
                #expect(hops.map(\.sha256) == [digest, digest])
                #expect(hops.map(\.method) == ["POST", "POST"])
            }
        }
    }

    /// A request without a body is sent as it is: no Content-Encoding, for GET and for an empty POST.
    @Test(arguments: [HTTPRequest.Method.get, .post, .delete])
    func aRequestWithoutABodyIsUnchanged(method: HTTPRequest.Method) async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            var request = TransportRequest(url: server.url("/request"), method: method)
            request.options.requestCompression = .gzip()
            let received = try ReceivedRequest(try await session.execute(request).body)
            #expect(received.method == method.rawValue)
            #expect(received.header("content-encoding") == nil)
            #expect(received.bodyLength == 0)
            #expect(await session.wireRequest(for: request).headerFields[.contentEncoding] == nil)
        }
    }

    /// A request that sets its own Content-Encoding is taken as encoded already: its body goes as it is.
    @Test func theRequestsOwnContentEncodingIsLeftAlone() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            var request = compressed(server.url("/request"), .string("already encoded"), .gzip())
            request.headerFields[.contentEncoding] = "br"
            let received = try ReceivedRequest(try await session.execute(request).body)
            #expect(received.headers["content-encoding"] == ["br"])
            #expect(received.body == "already encoded")
            #expect(received.header("content-length") == "15")
            #expect(await session.wireRequest(for: request).headerFields[.contentEncoding] == "br")
        }
    }

    /// The request as it goes on the wire shows the coding (so a logger prints it).
    @Test(arguments: [RequestCompression.gzip(), .deflate(level: 3)])
    func theWireRequestShowsContentEncoding(compression: RequestCompression) async throws {
        let session = try CurlSession()
        let shown = await session.wireRequest(for: compressed("http://127.0.0.1:9/upload", .string("hello"), compression))
        #expect(shown.headerFields[.contentEncoding] == compression.coding.rawValue)
        await session.shutdown()
    }

    @Test func levelsAreClamped() {
        #expect(RequestCompression.gzip(level: 12).level == 9)
        #expect(RequestCompression.deflate(level: -3).level == 0)
        #expect(RequestCompression.gzip().level == 6)
        #expect(RequestCompression.deflate().coding == .deflate)
    }

    /// A compressed stream that declared its length is still held to it: fewer or more bytes fail with
    /// `bodyLengthMismatch`.
    @Test(arguments: [50, 150])
    func aCompressedStreamIsHeldToItsDeclaredLength(written: Int) async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let body = TransportRequest.Body.stream(length: 100) { writer in try await writer.write([UInt8](repeating: 7, count: written)) }
            let error = await transportError { try await session.execute(compressed(server.url("/inflate"), body, .gzip())) }
            #expect(error?.code == .bodyLengthMismatch)
            #expect(
                error?.message
                    == (written < 100
                        ? "the request body's stream wrote 50 bytes; it declared 100"
                        : "the request body's stream wrote more than the 100 bytes it declared"))
        }
    }

    /// A small write to a compressed stream is flushed at once: the server echoes it back before the
    /// producer writes anything more (which it does only once the echo arrived). Without the flush the
    /// producer would wait for the echo for ever; it gives up after 20 s and the test fails.
    @Test(arguments: Wire.allCases)
    func aSmallWriteToACompressedStreamIsSentAtOnce(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            // An AsyncStream rather than a gate: its wait ends when the waiting task is cancelled.
            let (echoes, echoed) = AsyncStream<Void>.makeStream()
            let body = TransportRequest.Body.stream { writer in
                try await writer.write("first event\n")
                let arrived = await withTaskGroup(of: Bool.self) { group in
                    group.addTask {
                        for await _ in echoes { return true }
                        return false
                    }
                    group.addTask {
                        try? await Task.sleep(for: .seconds(20))
                        return false
                    }
                    let first = await group.next() ?? false
                    group.cancelAll()
                    return first
                }
                guard arrived else { throw CancellationError() }
                try await writer.write("second event\n")
            }
            let received = try await session.perform(compressed(server.url("/echo"), body, .gzip())) { head, body in
                var bytes: [UInt8] = []
                for try await chunk in body {
                    bytes += chunk
                    echoed.yield()
                }
                return bytes
            }
            let decoded = try gunzip(received)
            #expect(String(decoding: decoded, as: UTF8.self) == "first event\nsecond event\n")
        }
    }
}

/// Undoes gzip with the engine's own decoder (the server echoed the compressed bytes as they came).
private func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
    let decoder = ContentDecoder(.gzip, outputLimit: 1 << 20)
    decoder.feed(bytes[...])
    var output: [UInt8] = []
    while !decoder.needsInput { output += try decoder.decode() }
    return output
}
