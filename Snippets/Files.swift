// Files and progress: a download to disk, resumed after a failure; an upload from a file, compressed;
// progress as an async sequence.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation
import Synchronization

// A server that serves a 1 MiB export with a strong ETag and honours `Range` with `If-Range`, and
// accepts uploads.
let export = [UInt8]((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) })
final class Counter: Sendable { let value = Atomic(0) }
let served = Counter()
let server = try await LocalHTTPServer.start { request in
    if request.path == "/flaky.csv", served.value.add(1, ordering: .relaxed).oldValue == 0 {
        // The first answer breaks off halfway.
        let head = "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: \(export.count)\r\n\r\n"
        return .raw(Array(head.utf8) + export[..<(export.count / 2)], after: .close)
    }
    guard request.path == "/export.csv" || request.path == "/flaky.csv" else {
        return .text("received \(request.body.count) bytes, encoded as \(request.header("content-encoding") ?? "identity")")
    }
    let tag = "\"v1\""
    if let range = request.header("range"), request.header("if-range") == tag,
        let start = Int(range.dropFirst("bytes=".count).dropLast()), start < export.count
    {
        return .respond(
            status: 206,
            headers: [("ETag", tag), ("Content-Range", "bytes \(start)-\(export.count - 1)/\(export.count)")],
            body: Array(export[start...]))
    }
    return .respond(status: 200, headers: [("ETag", tag)], body: export)
}
let exportURL = server.url("/export.csv")
let flakyURL = server.url("/flaky.csv")
let uploadURL = server.url("/upload")
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-files-\(UUID().uuidString)").path
defer { try? FileManager.default.removeItem(atPath: folder) }
// snippet.show

let session = try CurlSession()

// A download to disk: written beside its destination and moved into place only when complete.
let download = try await session.download(
    TransportRequest(url: exportURL), to: DownloadDestination(path: "\(folder)/export.csv"),
    options: DownloadOptions(createsIntermediateDirectories: true))
print("\(download.status.code): \(download.fileSize) bytes at \(download.filePath)")

// The destination can depend on the response head, chosen when it arrives.
let named = DownloadDestination { head in
    "\(folder)/export-\(head.headerFields[.eTag]?.filter(\.isLetter) ?? "latest").csv"
}
_ = try await session.download(TransportRequest(url: exportURL), to: named)

// A download that keeps what it got when it fails, and resumes from there.
var options = DownloadOptions(keepsPartialFile: true)
let destination = DownloadDestination(path: "\(folder)/flaky.csv")
do {
    _ = try await session.download(TransportRequest(url: flakyURL), to: destination, options: options)
} catch {
    // A failed or cancelled download that can be resumed carries its resume data (Codable: it can be
    // stored across restarts).
    print("\(error.code) after \(error.resumeData?.byteCount ?? 0) bytes")
    options.resumeData = error.resumeData
}
let resumed = try await session.download(TransportRequest(url: flakyURL), to: destination, options: options)
print("resumed from byte \(resumed.resumedFrom), \(resumed.fileSize) bytes in all")

// An upload from a file, compressed with gzip while it is sent (in constant memory).
var upload = TransportRequest(url: uploadURL, method: .put, body: try .file(download.filePath))
upload.options.requestCompression = .gzip(level: 1)
let uploaded = try await session.execute(upload)
print(String(decoding: uploaded.body, as: UTF8.self))

// Progress: each element says how far the transfer has come; the last one carries the response.
for try await update in session.downloadWithProgress(
    TransportRequest(url: exportURL), to: DownloadDestination(path: "\(folder)/watched.csv"))
{
    if let response = update.response {
        print("done: \(response.fileSize) bytes")
    } else {
        print("\(Int(update.progress.fractionCompleted * 100))%: \(update.progress.bytesReceived) bytes")
    }
}

// Through a provider: a target asks for compression in its transfer options, and `progress(for:)`
// reports the call's transfer.
enum Reports: TargetType {
    case submit(Data)
    var baseURL: URL { URL(string: "https://reports.example")! }
    var path: String { "/upload" }
    var method: HTTPRequest.Method { .post }
    var task: RequestTask {
        switch self {
        case .submit(let data): .requestData(data)
        }
    }
    var headers: [String: String]? { ["Content-Type": "text/csv"] }
    var transferOptions: TransferOptions { TransferOptions(requestCompression: .gzip()) }
}

let provider = Provider<Reports>(
    // snippet.hide
    endpointClosure: server.endpointMapping(),
    // snippet.show
    session: session)
for try await update in provider.progress(for: .submit(Data(export))) {
    if let response = update.response { print("sent \(update.progress.bytesSent) bytes: \(response.statusCode)") }
}
// snippet.hide
await session.shutdown()
try await server.shutdown()
