// Curlew — a response's Content-Encoding through the provider, against stream_server.py: a gzip or deflate
// body whose framing is complete but whose coded stream stops half way is thrown by `request` (not returned
// as a 200 with the bytes decoded so far), and a coding the engine does not decode is handed over as sent
// when the target asked for it.

import Curlew
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// `stream_server.py`'s `/file` with `query` as a target (the base URL's query stays after the path).
private struct CodedFile: TargetType {
    /// `http://127.0.0.1:PORT`.
    let root: String
    let query: String
    var headers: [String: String]? = nil
    var task: RequestTask = .requestPlain

    init(_ server: StreamTestServer, _ query: String) {
        root = String(server.url("/").dropLast())
        self.query = query
    }

    var baseURL: URL { URL(string: root + "/?" + query) ?? URL(fileURLWithPath: "/") }
    var path: String { "/file" }
    var method: HTTPRequest.Method { .get }
}

@Suite struct ProviderContentCodingTests {
    /// 3,000,000 bytes coded, with Content-Length equal to the bytes sent, but only the first 2,000 bytes
    /// of the coded stream (no last block, no trailer): `request` throws `.transport` with
    /// `badContentEncoding`, the plugins see the failure, and `result(for:)` gives the same failure. The
    /// whole coded body of the same resource decodes to its bytes through the same provider.
    @Test(arguments: ["gzip", "deflate"])
    func aCodingThatStopsHalfWayIsThrown(coding: String) async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let recorder = Recorder()
            let provider = Provider<CodedFile>(session: session, plugins: [RecordingPlugin(name: "p", recorder: recorder)])
            let cut = CodedFile(server, "n=3000000&encoding=\(coding)&length=1&coded-cut=2000")
            let error = await curlewError { try await provider.request(cut) }
            guard case .transport(let transport)? = error else {
                Issue.record("expected a transport failure, got \(String(describing: error))")
                return
            }
            #expect(transport.code == .badContentEncoding)
            #expect(transport.message == "the \(coding) response body ends before its compressed stream does")
            #expect(error?.response == nil)
            #expect(recorder.all == ["p.prepare", "p.willSend", "p.didReceive(error)", "p.process"])

            guard case .failure(.transport(let again)) = await provider.result(for: cut) else {
                Issue.record("expected result(for:) to fail with a transport failure")
                return
            }
            #expect(again.code == .badContentEncoding)

            let whole = try await provider.request(CodedFile(server, "n=3000000&encoding=\(coding)&length=1"))
            #expect(whole.statusCode == 200)
            #expect([UInt8](whole.data) == streamPattern(count: 3_000_000))
        }
    }

    /// A download task's body in the same cut coding is thrown the same way, and nothing is left at its
    /// destination; the whole body of the same resource downloads to the destination, decoded.
    @Test func aDownloadTasksCodingThatStopsHalfWayIsThrown() async throws {
        try await withMultipartDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let destination = URL(fileURLWithPath: directory).appendingPathComponent("out.bin")
                let provider = Provider<CodedFile>(session: session)
                var cut = CodedFile(server, "n=3000000&encoding=gzip&length=1&coded-cut=2000")
                cut.task = .downloadDestination { _, _ in (destination, []) }
                let error = await curlewError { try await provider.request(cut) }
                guard case .transport(let transport)? = error else {
                    Issue.record("expected a transport failure, got \(String(describing: error))")
                    return
                }
                #expect(transport.code == .badContentEncoding)
                #expect(transport.message == "the gzip response body ends before its compressed stream does")
                #expect(!FileManager.default.fileExists(atPath: destination.path))

                var whole = CodedFile(server, "n=3000000&encoding=gzip&length=1")
                whole.task = .downloadDestination { _, _ in (destination, []) }
                let response = try await provider.request(whole)
                #expect(response.statusCode == 200)
                #expect(response.fileURL == destination)
                #expect(try [UInt8](Data(contentsOf: destination)) == streamPattern(count: 3_000_000))
            }
        }
    }

    /// br and zstd are neither offered nor decoded: a body labelled with one the target did not ask for
    /// is thrown as `badContentEncoding`; one the target asked for in its own `Accept-Encoding` is handed
    /// over as sent, its Content-Encoding kept (checking it is the caller's decoder's job).
    @Test(arguments: ["br", "zstd"])
    func aCodingNotDecodedIsHandedOverOnlyWhenAskedFor(coding: String) async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let provider = Provider<CodedFile>(session: session)
            let error = await curlewError { try await provider.request(CodedFile(server, "n=5000&label=\(coding)")) }
            guard case .transport(let transport)? = error else {
                Issue.record("expected a transport failure, got \(String(describing: error))")
                return
            }
            #expect(transport.code == .badContentEncoding)

            var asked = CodedFile(server, "n=5000&label=\(coding)")
            asked.headers = ["Accept-Encoding": coding]
            let response = try await provider.request(asked)
            #expect(response.statusCode == 200)
            #expect([UInt8](response.data) == streamPattern(count: 5000))
            #expect(response.headerFields[.contentEncoding] == coding)
            #expect(response.headerFields[HTTPField.Name("X-Seen-Accept-Encoding")!] == coding)
        }
    }
}
