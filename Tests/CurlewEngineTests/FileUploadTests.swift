// Curlew — files as request bodies against stream_server.py, checked by the SHA-256 the server computes of
// what it received: a 307 replay and libcurl's retry on a dead connection send the whole file again (also
// compressed), and a file that shrinks or grows while it is being sent fails with `bodyLengthMismatch`.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// Writes `payload` to `name` in `directory`; returns its path.
private func writeFile(_ payload: [UInt8], _ name: String, in directory: String) throws -> String {
    let path = directory + "/" + name
    try Data(payload).write(to: URL(fileURLWithPath: path))
    return path
}

/// What `/hold` logged under a key.
private struct HoldEvent: Decodable, Equatable {
    let event: String
    let received: Int
}

@Suite struct FileUploadTests {
    /// A 307 sends the file again from its first byte: both hops get all of it (a region: all of the
    /// region).
    @Test(arguments: Wire.allCases, [nil, 1000..<201_000])
    func a307SendsTheWholeFileAgain(wire: Wire, range: Range<Int>?) async throws {
        let payload = streamPattern(count: 300_000, from: 7)
        try await withScratchDirectory { directory in
            let path = try writeFile(payload, "body.bin", in: directory)
            try await withStreamServerAndSession(wire) { server, session in
                let sent = range.map { Array(payload[$0]) } ?? payload
                let digest = try await plainDigest(of: sent, server: server, session: session)
                let key = UUID().uuidString
                let body = try range.map { try TransportRequest.Body.file(path, range: $0) } ?? TransportRequest.Body.file(path)
                let url = server.url("/inflate?key=\(key)&status=307&to=/inflate%3Fkey%3D\(key)")
                let response = try await session.execute(TransportRequest(url: url, method: .put, body: body))
                #expect(response.status.code == 200)
                #expect(response.redirects.map(\.status.code) == [307])
                let hops = try await serverLog(server, session, key: key, as: InflateReport.self)
                #expect(hops.map(\.method) == ["PUT", "PUT"])
                #expect(hops.map(\.wireLength) == [sent.count, sent.count])
                #expect(hops.map(\.contentLength) == [sent.count, sent.count])
                #expect(hops.map(\.sha256) == [digest, digest])
            }
        }
    }

    /// The server reads the whole request on a reused connection and closes it without answering;
    /// libcurl sends it again on a new connection, with the whole file (compressed again, when asked).
    @Test(arguments: [nil, RequestCompression.gzip()])
    func libcurlsRetryOnADeadConnectionSendsTheWholeFileAgain(compression: RequestCompression?) async throws {
        let payload = streamPattern(count: 200_000, from: 3)
        try await withScratchDirectory { directory in
            let path = try writeFile(payload, "body.bin", in: directory)
            try await withStreamServerAndSession(.http1) { server, session in
                let digest = try await plainDigest(of: payload, server: server, session: session)
                let warmUp = try InflateReport(try await session.execute(TransportRequest(url: server.url("/inflate"), method: .post)))
                let tag = UUID().uuidString
                var request = TransportRequest(url: server.url("/inflate?drop-once=\(tag)"), method: .post, body: try .file(path))
                request.options.requestCompression = compression
                let report = try InflateReport(try await session.execute(request))
                #expect(try await server.stats().dropped.contains(tag))
                #expect(report.connection != warmUp.connection)
                #expect(report.request == 1)
                #expect(report.contentEncoding == compression?.coding.rawValue)
                #expect(report.complete)
                #expect(report.decodedLength == 200_000)
                #expect(report.sha256 == digest)
            }
        }
    }

    /// A 16 MiB file changes while it is being sent: the server holds the upload after its first MiB
    /// (so the client has read at most a few MiB of the file), the file is truncated to 8 MiB, grows by
    /// 1,000 bytes or is removed (its open descriptor would still read every byte), then the server reads
    /// on. The request fails — `bodyLengthMismatch` for a change of size, `invalidBody` for a removal —
    /// and the server never gets a body that looks complete.
    /// The same holds for a file framed by bytes of its own (a multipart form's file part).
    @Test(arguments: Wire.allCases, FileChange.allCases)
    func aFileThatChangesWhileItIsSentFails(wire: Wire, change: FileChange) async throws {
        for segmented in [false, true] {
            try await fileChangeWhileSent(wire: wire, change: change, segmented: segmented)
        }
    }

    /// A body of bytes and file regions (a multipart form's) is read in place and sent again whole after
    /// a 307: both hops get exactly the concatenation.
    @Test(arguments: Wire.allCases)
    func a307SendsBytesAndFilesAgain(wire: Wire) async throws {
        let payload = streamPattern(count: 300_000, from: 11)
        try await withScratchDirectory { directory in
            let path = try writeFile(payload, "body.bin", in: directory)
            try await withStreamServerAndSession(wire) { server, session in
                let head = Array("--b\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n".utf8)
                let middle = Array("\r\n--b\r\n\r\n".utf8)
                let tail = Array("\r\n--b--\r\n".utf8)
                let sent = head + payload + middle + Array(payload[1000..<201_000]) + tail
                let digest = try await plainDigest(of: sent, server: server, session: session)
                let pieces: [TransportRequest.Body] = [
                    .bytes(head), try .file(path), .bytes(middle), try .file(path, range: 1000..<201_000), .bytes(tail),
                ]
                let body = try #require(TransportRequest.Body.concatenating(pieces))
                #expect(body.knownLength == sent.count)
                #expect(body.isReplayable)
                #expect(try await body.collect(upTo: sent.count) == Data(sent))
                let key = UUID().uuidString
                let url = server.url("/inflate?key=\(key)&status=307&to=/inflate%3Fkey%3D\(key)")
                let response = try await session.execute(TransportRequest(url: url, method: .post, body: body))
                #expect(response.status.code == 200)
                let hops = try await serverLog(server, session, key: key, as: InflateReport.self)
                #expect(hops.map(\.method) == ["POST", "POST"])
                #expect(hops.map(\.contentLength) == [sent.count, sent.count])
                #expect(hops.map(\.sha256) == [digest, digest])
            }
        }
    }

    private func fileChangeWhileSent(wire: Wire, change: FileChange, segmented: Bool) async throws {
        let size = 16 << 20
        try await withScratchDirectory { directory in
            let path = try writeFile(streamPattern(count: size), "body.bin", in: directory)
            try await withStreamServerAndSession(wire) { server, session in
                let key = UUID().uuidString
                let upload = try await heldUpload(of: path, key: key, segmented: segmented, server: server, session: session)
                try change.apply(to: path, shrunkSize: size - (8 << 20))
                _ = try await session.execute(TransportRequest(url: server.url("/release?key=\(key)")))
                let error = await transportError { try await upload.value }
                switch change {
                case .shrink:
                    #expect(error?.code == .bodyLengthMismatch)
                    #expect(error?.message == "\(path) ended after \(size - (8 << 20)) of the \(size) bytes it had when the body was made")
                case .grow:
                    #expect(error?.code == .bodyLengthMismatch)
                    #expect(error?.message == "\(path) has \(size + 1000) bytes, not the \(size) it had when the body was made")
                case .remove:
                    #expect(error?.code == .invalidBody)
                    #expect(error?.message == "\(path) was removed while it was being sent")
                }
                let events = try await holdEvents(key: key, count: 2, server: server, session: session)
                #expect(events.map(\.event) == ["holding", "failed"])
                // Never the whole body: the file's bytes and, around a framed file, the framing's.
                let total = segmented ? size + "before the file\r\n".utf8.count + "\r\nafter it".utf8.count : size
                #expect(events.last.map { $0.received < total } == true)
            }
        }
    }

    /// Starts uploading the file at `path` to `/hold`, which stops reading after its first MiB, and returns
    /// once the server holds it.
    private func heldUpload(
        of path: String, key: String, segmented: Bool = false, server: StreamTestServer, session: CurlSession
    ) async throws -> Task<TransportResponse, any Error> {
        var body = try TransportRequest.Body.file(path)
        if segmented {
            body = try #require(TransportRequest.Body.concatenating([.string("before the file\r\n"), body, .string("\r\nafter it")]))
        }
        let request = TransportRequest(url: server.url("/hold?key=\(key)&after=1048576"), method: .post, body: body)
        let upload = Task { try await session.execute(request) }
        let events = try await holdEvents(key: key, count: 1, server: server, session: session)
        #expect(events.first == HoldEvent(event: "holding", received: 1 << 20))
        return upload
    }

    /// The `/hold` route's log for `key`, once it has `count` events (polled for up to 20 s).
    private func holdEvents(key: String, count: Int, server: StreamTestServer, session: CurlSession) async throws -> [HoldEvent] {
        var events: [HoldEvent] = []
        for _ in 0..<1000 where events.count < count {
            events = try await serverLog(server, session, key: key, as: HoldEvent.self)
            if events.count < count { try await Task.sleep(for: .milliseconds(20)) }
        }
        return events
    }
}

