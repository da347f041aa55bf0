// Curlew — downloads to disk against stream_server.py's `/file`: the file lands whole or not at all, a
// partial file is kept only when it can be resumed, resuming follows RFC 9110's Range and If-Range, and a
// disk that fills up (injected, then real in a tmpfs of its own) ends in `fileWriteFailed`.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

#if canImport(Glibc)
import Glibc
#endif

// MARK: Helpers shared by the download, upload and progress tests

/// Runs `body` with a fresh temporary directory, removed afterwards.
func withScratchDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-test-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return try await ensuring({ try await body(directory) }, cleanUp: { try? FileManager.default.removeItem(atPath: directory) })
}

/// The names in `directory`, sorted (empty when it cannot be listed).
func scratchEntries(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}

/// The bytes of the file at `path`; nil when it cannot be read.
func scratchBytes(_ path: String) -> [UInt8]? {
    (try? FileContents.read(atPath: path)).map { [UInt8]($0) }
}

/// The size of the file at `path`; nil when there is none.
func scratchSize(_ path: String) -> Int? {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue
}

/// What stream_server.py logged under `key` (`/log`), decoded as `Entry`s.
func serverLog<Entry: Decodable>(
    _ server: StreamTestServer, _ session: CurlSession, key: String, as type: Entry.Type = Entry.self
) async throws -> [Entry] {
    let response = try await session.execute(TransportRequest(url: server.url("/log?key=\(key)")))
    return try JSONDecoder().decode([Entry].self, from: response.body)
}

/// One request to `/file`, as the server logged it.
struct FileRequestRecord: Decodable, Equatable, CustomStringConvertible {
    let method: String
    let range: String?
    let ifRange: String?
    let acceptEncoding: String?
    let status: Int
    /// Body bytes the server wrote.
    let sent: Int

    enum CodingKeys: String, CodingKey {
        case method, range, status, sent
        case ifRange = "if_range"
        case acceptEncoding = "accept_encoding"
    }

    var description: String { "\(method) range=\(range ?? "-") if-range=\(ifRange ?? "-") → \(status), \(sent) bytes" }
}

/// A header field of a head by name.
func field(_ head: ResponseHead, _ name: String) -> String? {
    HTTPField.Name(name).flatMap { head.headerFields[$0] }
}


// MARK: Download-only helpers

/// A disk that fills up at an exact byte, as a real one does: write(2) stores what fits of a write that
/// crosses `capacity`, then the write fails with ENOSPC.
private final class FullDiskWriter: DownloadFileWriter {
    let capacity: Int
    private let stored = Locked(0)

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Bytes stored in the file.
    var bytesStored: Int { stored.withLock { $0 } }

    func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        stored.withLock { stored in
            guard let base = bytes.baseAddress else { return 0 }
            let fitting = min(bytes.count, capacity - stored)
            var offset = 0
            while offset < fitting {
                let count = Glibc.write(descriptor, base + offset, fitting - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += count
                stored += count
            }
            return fitting < bytes.count ? ENOSPC : 0
        }
    }
}

/// A name `.<destination>.<random>.download` for the temporary file of `destination`.
private func isTemporaryName(_ name: String, for destination: String) -> Bool {
    name.hasPrefix(".\(destination).") && name.hasSuffix(".download") && name.count > destination.count + 11
}

/// Downloads `url` to `path` with `keepsPartialFile`, expecting it to break off; returns its error.
private func brokenDownload(
    _ session: CurlSession, _ url: String, to path: String, keepsPartialFile: Bool = true,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> TransportError? {
    await transportError(
        {
            try await session.download(
                TransportRequest(url: url), to: DownloadDestination(path: path),
                options: DownloadOptions(keepsPartialFile: keepsPartialFile))
        }, sourceLocation: sourceLocation)
}

/// Downloads `url` to `path`, resuming from `resumeData`.
private func resumedDownload(
    _ session: CurlSession, _ url: String, to path: String, from resumeData: ResumeData
) async throws(TransportError) -> DownloadResponse {
    try await session.download(
        TransportRequest(url: url), to: DownloadDestination(path: path), options: DownloadOptions(resumeData: resumeData))
}

/// Whether this machine lets an unprivileged process mount a tmpfs in a namespace of its own.
private func canMountPrivately() async -> Bool {
    let outcome = try? await TestProcess.run(
        executable: "/usr/bin/env", arguments: ["unshare", "-rm", "true"], timeout: .seconds(10), name: "unshare")
    return outcome?.status == 0
}

/// What DownloadProbe printed.
private struct ProbeReport: Decodable {
    let completed: Bool
    let fileSize: Int?
    let code: String?
    let message: String?
    let resumeByteCount: Int?
    let partialFileSize: Int?
    let files: [String]
}

@Suite struct DownloadTests {
    // MARK: Complete and cancelled

    @Test(arguments: Wire.allCases, [false, true])
    func aCompleteDownloadLeavesExactlyTheFile(wire: Wire, syncsBeforeMove: Bool) async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(wire) { server, session in
                let destination = directory + "/out.bin"
                let response = try await session.download(
                    TransportRequest(url: server.url("/file?n=300000&etag=v1")), to: DownloadDestination(path: destination),
                    options: DownloadOptions(syncsBeforeMove: syncsBeforeMove))
                #expect(response.head.status.code == 200)
                #expect(response.filePath == destination)
                #expect(response.fileSize == 300_000)
                #expect(response.resumedFrom == 0)
                #expect(scratchBytes(destination) == streamPattern(count: 300_000))
                #expect(scratchEntries(directory) == ["out.bin"])
            }
        }
    }

    /// The destination closure runs once, on the final head (after a redirect), before the temporary file
    /// exists; the file goes where it says.
    @Test func theDestinationClosureGetsTheFinalHead() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let seen = Locked<[(status: Int, etag: String?, url: String, entries: [String])]>([])
                let destination = DownloadDestination { head in
                    seen.withLock { $0.append((head.status.code, field(head, "ETag"), head.effectiveURL, scratchEntries(directory))) }
                    return directory + "/named-\(field(head, "ETag")?.filter(\.isLetter) ?? "none").bin"
                }
                let target = "/file%3Fn%3D1000%26etag%3Dabc"
                let response = try await session.download(
                    TransportRequest(url: server.url("/redirect?status=302&to=\(target)")), to: destination)
                let calls = seen.withLock { $0 }
                #expect(calls.count == 1)
                #expect(calls.first?.status == 200)
                #expect(calls.first?.etag == "\"abc\"")
                #expect(calls.first?.url == server.url("/file?n=1000&etag=abc"))
                #expect(calls.first?.entries == [])
                #expect(response.filePath == directory + "/named-abc.bin")
                #expect(response.head.redirects.map(\.status.code) == [302])
                #expect(scratchBytes(directory + "/named-abc.bin") == streamPattern(count: 1000))
                #expect(scratchEntries(directory) == ["named-abc.bin"])
            }
        }
    }

    /// Cancelled once its temporary file exists: the error is `cancelled` and the directory holds nothing,
    /// whether a partial could not be kept (no validator) or was not asked for.
    @Test(arguments: [(query: "", keepsPartialFile: true), (query: "&etag=v1", keepsPartialFile: false)])
    func aCancelledDownloadLeavesNothing(query: String, keepsPartialFile: Bool) async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let request = TransportRequest(url: server.url("/file?n=4000000&pace=1000000&chunk=10000\(query)"))
                let task = Task {
                    try await session.download(
                        request, to: DownloadDestination(path: directory + "/out.bin"),
                        options: DownloadOptions(keepsPartialFile: keepsPartialFile))
                }
                let started = await eventually { scratchEntries(directory).contains { isTemporaryName($0, for: "out.bin") } }
                #expect(started)
                task.cancel()
                let error = await transportError { try await task.value }
                #expect(error?.code == .cancelled)
                #expect(error?.resumeData == nil)
                #expect(scratchEntries(directory) == [])
            }
        }
    }

    /// Cancelled with keepsPartialFile and a strong ETag: the partial stays beside the destination, the
    /// error describes it, and resuming from it completes the file.
    @Test func aCancelledResumableDownloadKeepsItsPartialFileAndResumes() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let key = UUID().uuidString
                let url = server.url("/file?n=4000000&etag=v1&key=\(key)&pace=1000000&chunk=10000&then-pace=")
                let destination = directory + "/out.bin"
                let task = Task {
                    try await session.download(
                        TransportRequest(url: url), to: DownloadDestination(path: destination),
                        options: DownloadOptions(keepsPartialFile: true))
                }
                let started = await eventually {
                    scratchEntries(directory).contains { name in
                        isTemporaryName(name, for: "out.bin") && (scratchSize(directory + "/" + name) ?? 0) > 0
                    }
                }
                #expect(started)
                task.cancel()
                let error = await transportError { try await task.value }
                #expect(error?.code == .cancelled)
                let resumeData = try #require(error?.resumeData)
                let partialName = URL(fileURLWithPath: resumeData.partialFilePath).lastPathComponent
                #expect(URL(fileURLWithPath: resumeData.partialFilePath).deletingLastPathComponent().path == directory)
                #expect(isTemporaryName(partialName, for: "out.bin"))
                #expect(scratchEntries(directory) == [partialName])
                #expect(resumeData.url == url)
                #expect(resumeData.destinationPath == destination)
                #expect(resumeData.validator == .entityTag("\"v1\""))
                #expect(resumeData.byteCount > 0)
                #expect(resumeData.byteCount < 4_000_000)
                #expect(scratchBytes(resumeData.partialFilePath) == streamPattern(count: resumeData.byteCount))

                let response = try await resumedDownload(session, url, to: destination, from: resumeData)
                #expect(response.head.status.code == 206)
                #expect(response.resumedFrom == resumeData.byteCount)
                #expect(response.fileSize == 4_000_000)
                #expect(scratchBytes(destination) == streamPattern(count: 4_000_000))
                #expect(scratchEntries(directory) == ["out.bin"])
                let log = try await serverLog(server, session, key: key, as: FileRequestRecord.self)
                #expect(log.map(\.range) == [nil, "bytes=\(resumeData.byteCount)-"])
                #expect(log.map(\.ifRange) == [nil, "\"v1\""])
                #expect(log.map(\.status) == [200, 206])
            }
        }
    }

    // MARK: Resuming

    /// The connection breaks after 70,000 of 200,000 bytes: the partial holds exactly those, and the
    /// resume asks for the rest with Range and If-Range (and identity coding), getting a 206.
    @Test(arguments: Wire.allCases)
    func aResumedDownloadWithAStrongETagSendsRangeAndIfRange(wire: Wire) async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(wire) { server, session in
                let key = UUID().uuidString
                let url = server.url("/file?n=200000&etag=v1&key=\(key)&cut=70000&then-cut=")
                let destination = directory + "/out.bin"
                let error = await brokenDownload(session, url, to: destination)
                let resumeData = try #require(error?.resumeData)
                #expect(resumeData.byteCount == 70_000)
                #expect(resumeData.validator == .entityTag("\"v1\""))
                #expect(scratchBytes(resumeData.partialFilePath) == streamPattern(count: 70_000))

                let response = try await resumedDownload(session, url, to: destination, from: resumeData)
                #expect(response.head.status.code == 206)
                #expect(field(response.head, "X-Seen-Range") == "bytes=70000-")
                #expect(field(response.head, "X-Seen-If-Range") == "\"v1\"")
                #expect(field(response.head, "X-Seen-Accept-Encoding") == "identity")
                #expect(response.resumedFrom == 70_000)
                #expect(response.fileSize == 200_000)
                #expect(scratchBytes(destination) == streamPattern(count: 200_000))
                #expect(scratchEntries(directory) == ["out.bin"])
                let log = try await serverLog(server, session, key: key, as: FileRequestRecord.self)
                #expect(log.map(\.acceptEncoding) == ["identity", "identity"])
                #expect(log.map(\.sent) == [70_000, 130_000])
            }
        }
    }

    /// The first download breaking off is a connection closed before the response was complete.
    @Test func aDownloadThatBreaksOffFailsWithConnectionClosed() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let error = await brokenDownload(session, server.url("/file?n=200000&etag=v1&cut=70000"), to: directory + "/out.bin")
                #expect(error?.code == .connectionClosed)
                #expect(error?.resumeData?.byteCount == 70_000)
            }
        }
    }

    /// Without an ETag, a Last-Modified a day before the response's Date validates: If-Range carries it.
    @Test func aResumedDownloadWithLastModifiedSendsTheDate() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let key = UUID().uuidString
                let url = server.url("/file?n=100000&last-modified=1&key=\(key)&cut=25000&then-cut=")
                let destination = directory + "/out.bin"
                let error = await brokenDownload(session, url, to: destination)
                let resumeData = try #require(error?.resumeData)
                #expect(resumeData.byteCount == 25_000)
                #expect(resumeData.validator == .lastModified("Tue, 14 Nov 2023 22:13:20 GMT"))

                let response = try await resumedDownload(session, url, to: destination, from: resumeData)
                #expect(response.head.status.code == 206)
                #expect(field(response.head, "X-Seen-Range") == "bytes=25000-")
                #expect(field(response.head, "X-Seen-If-Range") == "Tue, 14 Nov 2023 22:13:20 GMT")
                #expect(response.resumedFrom == 25_000)
                #expect(scratchBytes(destination) == streamPattern(count: 100_000))
                #expect(scratchEntries(directory) == ["out.bin"])
            }
        }
    }

    /// Nothing is kept, even when asked, for a response that cannot be resumed: a weak ETag, a
    /// Last-Modified less than a second before the Date, no validator, or a Content-Encoding.
    @Test(arguments: ["etag=v1&weak=1", "last-modified=1&date-offset=0", "etag=", "etag=v1&encoding=gzip&length=0"])
    func aResponseThatCannotBeResumedKeepsNoPartialFile(query: String) async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                // The gzip body is about 800 bytes.
                let size = query.contains("encoding") ? 300 : 30_000
                let error = await brokenDownload(session, server.url("/file?n=200000&cut=\(size)&\(query)"), to: directory + "/out.bin")
                #expect(error?.code == .connectionClosed)
                #expect(error?.resumeData == nil)
                #expect(scratchEntries(directory) == [])
            }
        }
    }

    /// The validator changed (If-Range false): the server answers 200 with the whole body, and the file
    /// starts again from byte 0.
    @Test func aResumeAnsweredWith200StartsAgainFromZero() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let key = UUID().uuidString
                let url = server.url("/file?n=100000&etag=v1&key=\(key)&cut=50000&then-cut=&then-etag=v2")
                let destination = directory + "/out.bin"
                let resumeData = try #require(await brokenDownload(session, url, to: destination)?.resumeData)
                #expect(resumeData.byteCount == 50_000)
                let response = try await resumedDownload(session, url, to: destination, from: resumeData)
                #expect(response.head.status.code == 200)
                #expect(field(response.head, "ETag") == "\"v2\"")
                #expect(response.resumedFrom == 0)
                #expect(response.fileSize == 100_000)
                #expect(scratchBytes(destination) == streamPattern(count: 100_000))
                #expect(scratchEntries(directory) == ["out.bin"])
                let log = try await serverLog(server, session, key: key, as: FileRequestRecord.self)
                #expect(log.map(\.range) == [nil, "bytes=50000-"])
                #expect(log.map(\.ifRange) == [nil, "\"v1\""])
                #expect(log.map(\.status) == [200, 200])
            }
        }
    }

    /// A 206 that starts elsewhere than the partial's end, or a 416 whose size is not the partial's:
    /// `resumeMismatch`, and nothing at the destination.
    @Test(arguments: ["then-wrong-range=1", "then-n=20000"])
    func aResumeThatDoesNotContinueThePartialFileFails(change: String) async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let url = server.url("/file?n=100000&etag=v1&key=\(UUID().uuidString)&cut=40000&then-cut=&\(change)")
                let destination = directory + "/out.bin"
                let resumeData = try #require(await brokenDownload(session, url, to: destination)?.resumeData)
                #expect(resumeData.byteCount == 40_000)
                let error = await transportError {
                    try await resumedDownload(session, url, to: destination, from: resumeData)
                }
                #expect(error?.code == .resumeMismatch)
                #expect(error?.resumeData == nil)
                // The partial file the answer does not continue is removed too.
                #expect(scratchEntries(directory) == [])
            }
        }
    }

    /// A resumed download whose URL redirects to another origin (a CDN) still sends `Range` and
    /// `If-Range` on the hop, and resumes.
    @Test func aResumeRedirectedToAnotherOriginStillResumes() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                try await withStreamServer { cdn in
                    let file = cdn.url("/file?n=200000&etag=v1&key=\(UUID().uuidString)&cut=70000&then-cut=")
                    let location = file.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? file
                    let url = server.url("/redirect?status=302&to=\(location)")
                    let destination = directory + "/out.bin"
                    let resumeData = try #require(await brokenDownload(session, url, to: destination)?.resumeData)
                    #expect(resumeData.byteCount == 70_000)
                    let response = try await resumedDownload(session, url, to: destination, from: resumeData)
                    #expect(response.head.status.code == 206)
                    #expect(response.head.redirects.count == 1)
                    #expect(field(response.head, "X-Seen-Range") == "bytes=70000-")
                    #expect(field(response.head, "X-Seen-If-Range") == "\"v1\"")
                    #expect(response.resumedFrom == 70_000)
                    #expect(scratchBytes(destination) == streamPattern(count: 200_000))
                    #expect(scratchEntries(directory) == ["out.bin"])
                }
            }
        }
    }

    /// Resume data made for another URL is not used (its validator says nothing about this resource):
    /// the download starts from zero without `Range`, and the other download's partial file stays.
    @Test func resumeDataForAnotherURLIsNotUsed() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let first = server.url("/file?n=100000&etag=v1&key=\(UUID().uuidString)&cut=40000&then-cut=")
                let resumeData = try #require(await brokenDownload(session, first, to: directory + "/first.bin")?.resumeData)
                let key = UUID().uuidString
                let other = server.url("/file?n=100000&etag=v1&key=\(key)")
                let response = try await resumedDownload(session, other, to: directory + "/other.bin", from: resumeData)
                #expect(response.head.status.code == 200)
                #expect(response.resumedFrom == 0)
                #expect(scratchBytes(directory + "/other.bin") == streamPattern(count: 100_000))
                #expect(scratchSize(resumeData.partialFilePath) == 40_000)
                let log = try await serverLog(server, session, key: key, as: FileRequestRecord.self)
                #expect(log.map(\.range) == [nil])
            }
        }
    }

    /// Every byte arrived but the connection broke (the server announced more): the resume gets 416
    /// `bytes */N` with N the partial's size, and the partial (not the 416's body) becomes the file.
    @Test func a416ForACompletePartialFileFinishesTheDownload() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let key = UUID().uuidString
                let url = server.url("/file?n=60000&etag=v1&key=\(key)&claim=60010&then-claim=")
                let destination = directory + "/out.bin"
                let resumeData = try #require(await brokenDownload(session, url, to: destination)?.resumeData)
                #expect(resumeData.byteCount == 60_000)
                let response = try await resumedDownload(session, url, to: destination, from: resumeData)
                #expect(response.head.status.code == 416)
                #expect(field(response.head, "Content-Range") == "bytes */60000")
                #expect(response.resumedFrom == 60_000)
                #expect(response.fileSize == 60_000)
                #expect(scratchBytes(destination) == streamPattern(count: 60_000))
                #expect(scratchEntries(directory) == ["out.bin"])
                let log = try await serverLog(server, session, key: key, as: FileRequestRecord.self)
                #expect(log.map(\.range) == [nil, "bytes=60000-"])
            }
        }
    }

    /// A partial file that is gone, or no longer the size the resume data says: the download starts from
    /// zero, without Range.
    @Test(arguments: [false, true])
    func aMissingOrChangedPartialFileStartsFromZero(removed: Bool) async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let key = UUID().uuidString
                let url = server.url("/file?n=100000&etag=v1&key=\(key)&cut=30000&then-cut=")
                let destination = directory + "/out.bin"
                let resumeData = try #require(await brokenDownload(session, url, to: destination)?.resumeData)
                if removed {
                    try FileManager.default.removeItem(atPath: resumeData.partialFilePath)
                } else {
                    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: resumeData.partialFilePath))
                    try handle.seekToEnd()
                    try handle.write(contentsOf: Data([0x2A]))
                    try handle.close()
                }
                let response = try await resumedDownload(session, url, to: destination, from: resumeData)
                #expect(response.head.status.code == 200)
                #expect(field(response.head, "X-Seen-Range") == nil)
                #expect(field(response.head, "X-Seen-If-Range") == nil)
                #expect(response.resumedFrom == 0)
                #expect(scratchBytes(destination) == streamPattern(count: 100_000))
                #expect(scratchEntries(directory) == ["out.bin"])
            }
        }
    }

    // MARK: Disk full and unwritable destinations

    /// The disk fills at byte 100,000 of 500,000: `fileWriteFailed` with strerror's text; the partial is
    /// kept only when it can be resumed and that was asked for, and its resume data counts the bytes the
    /// file holds (the last write stored part of its bytes).
    @Test(arguments: [
        (query: "&etag=v1", keepsPartialFile: true), (query: "&etag=v1", keepsPartialFile: false),
        (query: "", keepsPartialFile: true),
    ])
    func aFullDiskFailsWithFileWriteFailed(query: String, keepsPartialFile: Bool) async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let writer = FullDiskWriter(capacity: 100_000)
                var options = DownloadOptions(keepsPartialFile: keepsPartialFile)
                options.writer = writer
                let error = await transportError {
                    try await session.download(
                        TransportRequest(url: server.url("/file?n=500000\(query)")), to: DownloadDestination(path: directory + "/out.bin"),
                        options: options)
                }
                #expect(error?.code == .fileWriteFailed)
                #expect(error?.message.contains(String(cString: strerror(ENOSPC))) == true, "\(String(describing: error?.message))")
                if keepsPartialFile && !query.isEmpty {
                    let resumeData = try #require(error?.resumeData)
                    #expect(writer.bytesStored == 100_000)
                    #expect(resumeData.byteCount > 0)
                    #expect(resumeData.byteCount <= 100_000)
                    #expect(scratchSize(resumeData.partialFilePath) == resumeData.byteCount)
                    #expect(scratchBytes(resumeData.partialFilePath) == streamPattern(count: resumeData.byteCount))
                    #expect(scratchEntries(directory) == [URL(fileURLWithPath: resumeData.partialFilePath).lastPathComponent])
                } else {
                    #expect(error?.resumeData == nil)
                    #expect(scratchEntries(directory) == [])
                }
            }
        }
    }

    /// A real disk fills up: DownloadProbe downloads 1 MB into a 256 KiB tmpfs mounted in a namespace of
    /// its own (skipped where unprivileged namespaces are not allowed).
    @Test(.enabled("needs `unshare -rm`") { await canMountPrivately() }, arguments: [false, true])
    func aRealFullDiskFailsWithFileWriteFailed(keepsPartialFile: Bool) async throws {
        let probe = try #require(siblingExecutable("DownloadProbe"), "DownloadProbe was not built beside the test binary")
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, _ in
                let script = #"mount -t tmpfs -o size=256k tmpfs "$1" && exec "$2" "$3" "$1/out.bin" $4"#
                let outcome = try await TestProcess.run(
                    executable: "/usr/bin/env",
                    arguments: ["unshare", "-rm", "sh", "-c", script, "sh", directory, probe, server.url("/file?n=1000000&etag=v1")]
                        + (keepsPartialFile ? ["--keep"] : []),
                    timeout: .seconds(60), name: "DownloadProbe")
                #expect(outcome.status == 1, "stderr: \(outcome.standardError)")
                let report = try JSONDecoder().decode(ProbeReport.self, from: outcome.standardOutput)
                #expect(!report.completed)
                #expect(report.code == "fileWriteFailed")
                #expect(report.message?.contains(String(cString: strerror(ENOSPC))) == true, "\(String(describing: report.message))")
                if keepsPartialFile {
                    #expect(report.files.count == 1)
                    #expect(report.files.allSatisfy { isTemporaryName($0, for: "out.bin") })
                    let kept = try #require(report.resumeByteCount)
                    #expect(kept > 0)
                    #expect(kept <= 256 * 1024)
                    #expect(report.partialFileSize == kept)
                } else {
                    #expect(report.files == [])
                    #expect(report.resumeByteCount == nil)
                }
                // The tmpfs lived in the probe's namespace only: nothing was written here.
                #expect(scratchEntries(directory) == [])
            }
        }
    }

    /// A destination whose parent is a regular file cannot be created.
    @Test func anUnwritableDestinationFailsWithFileWriteFailed() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                #expect(FileManager.default.createFile(atPath: directory + "/blocker", contents: Data("x".utf8)))
                let error = await transportError {
                    try await session.download(
                        TransportRequest(url: server.url("/file?n=1000")), to: DownloadDestination(path: directory + "/blocker/out.bin"))
                }
                #expect(error?.code == .fileWriteFailed)
                #expect(error?.message.contains(String(cString: strerror(ENOTDIR))) == true, "\(String(describing: error?.message))")
                #expect(scratchEntries(directory) == ["blocker"])
                #expect(scratchBytes(directory + "/blocker") == Array("x".utf8))
            }
        }
    }

    @Test func intermediateDirectoriesAreCreatedOnlyWhenAsked() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let destination = directory + "/a/b/out.bin"
                let request = TransportRequest(url: server.url("/file?n=1000"))
                let error = await transportError { try await session.download(request, to: DownloadDestination(path: destination)) }
                #expect(error?.code == .fileWriteFailed)
                #expect(scratchEntries(directory) == [])
                let response = try await session.download(
                    request, to: DownloadDestination(path: destination), options: DownloadOptions(createsIntermediateDirectories: true))
                #expect(response.fileSize == 1000)
                #expect(scratchBytes(destination) == streamPattern(count: 1000))
                #expect(scratchEntries(directory + "/a/b") == ["out.bin"])
            }
        }
    }

    /// An existing file is replaced by default; with replacesExistingFile false it stays and the download
    /// fails.
    @Test func anExistingFileIsReplacedOnlyWhenAllowed() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let destination = directory + "/out.bin"
                let request = TransportRequest(url: server.url("/file?n=1000"))
                #expect(FileManager.default.createFile(atPath: destination, contents: Data("old".utf8)))
                let error = await transportError {
                    try await session.download(
                        request, to: DownloadDestination(path: destination), options: DownloadOptions(replacesExistingFile: false))
                }
                #expect(error?.code == .fileWriteFailed)
                #expect(scratchBytes(destination) == Array("old".utf8))
                #expect(scratchEntries(directory) == ["out.bin"])
                let response = try await session.download(request, to: DownloadDestination(path: destination))
                #expect(response.fileSize == 1000)
                #expect(scratchBytes(destination) == streamPattern(count: 1000))
                #expect(scratchEntries(directory) == ["out.bin"])
            }
        }
    }

    // MARK: What is asked and written

    /// A download that may keep a partial file asks for identity coding (a request's own field wins); one
    /// that does not asks as any request does.
    @Test func keepingAPartialFileAsksForIdentityCoding() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let request = TransportRequest(url: server.url("/file?n=1000&etag=v1"))
                var seen: [String?] = []
                for (index, keeps) in [true, false].enumerated() {
                    let response = try await session.download(
                        request, to: DownloadDestination(path: directory + "/\(index).bin"),
                        options: DownloadOptions(keepsPartialFile: keeps))
                    seen.append(field(response.head, "X-Seen-Accept-Encoding"))
                }
                var own = request
                own.headerFields[.acceptEncoding] = "gzip"
                let response = try await session.download(
                    own, to: DownloadDestination(path: directory + "/own.bin"), options: DownloadOptions(keepsPartialFile: true))
                seen.append(field(response.head, "X-Seen-Accept-Encoding"))
                // Without a partial file to keep: the codings the engine decodes as it writes, as for a
                // streamed response.
                #expect(seen == ["identity", "deflate, gzip", "gzip"])
            }
        }
    }

    /// A compressed response is written decoded.
    @Test func aCompressedResponseIsWrittenDecoded() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let destination = directory + "/out.bin"
                let response = try await session.download(
                    TransportRequest(url: server.url("/file?n=300000&encoding=gzip")), to: DownloadDestination(path: destination))
                #expect(field(response.head, "Content-Encoding") == "gzip")
                #expect(response.fileSize == 300_000)
                #expect(scratchBytes(destination) == streamPattern(count: 300_000))
            }
        }
    }

    /// Any status's body is the file: a 404 is a completed download of its body.
    @Test func anErrorStatusIsDownloadedToo() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let destination = directory + "/out.bin"
                let response = try await session.download(
                    TransportRequest(url: server.url("/file?n=5000&status=404")), to: DownloadDestination(path: destination))
                #expect(response.head.status.code == 404)
                #expect(response.fileSize == 5000)
                #expect(scratchBytes(destination) == streamPattern(count: 5000))
            }
        }
    }

    /// The session's total timeout does not apply to a download: one paced past it completes.
    @Test func theSessionsTotalTimeoutDoesNotCutADownload() async throws {
        try await withScratchDirectory { directory in
            let configure: (inout SessionConfiguration) -> Void = { $0.totalTimeout = .milliseconds(300) }
            try await withStreamServerAndSession(.http1, configure: configure) { server, session in
                let destination = directory + "/out.bin"
                let request = TransportRequest(url: server.url("/file?n=200000&pace=200000&chunk=10000"))
                let response = try await session.download(request, to: DownloadDestination(path: destination))
                #expect(response.fileSize == 200_000)
                #expect(scratchBytes(destination) == streamPattern(count: 200_000))
                // The same request buffered is cut by it.
                let error = await transportError { try await session.execute(request) }
                #expect(error?.code == .timedOut)
                #expect(error?.timeout == .total)
            }
        }
    }
}
