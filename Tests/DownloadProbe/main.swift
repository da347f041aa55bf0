// Curlew — downloads one URL to a path and prints how it ended, as one line of JSON: run by DownloadTests
// inside a mount namespace of its own with a tiny tmpfs at the destination's directory, so that the disk
// really fills up (the test process cannot see that tmpfs, so the probe reports what the directory holds).
//
// Usage: DownloadProbe URL PATH [--keep]   (--keep: DownloadOptions.keepsPartialFile)
// Exit status: 0 when the download completed, 1 when it threw, 2 on bad usage.

import CurlewEngine
import Foundation

/// What the probe prints.
struct ProbeReport: Encodable {
    var completed: Bool
    var fileSize: Int?
    var code: String?
    var message: String?
    var resumeByteCount: Int?
    var partialFileSize: Int?
    /// The destination directory's entries afterwards, sorted.
    var files: [String]
}

let arguments = CommandLine.arguments
guard arguments.count == 3 || (arguments.count == 4 && arguments[3] == "--keep") else {
    FileHandle.standardError.write(Data("usage: DownloadProbe URL PATH [--keep]\n".utf8))
    exit(2)
}
let path = arguments[2]
let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path

func size(of path: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
}

var report = ProbeReport(completed: false, files: [])
do {
    let session = try CurlSession()
    do {
        let response = try await session.download(
            TransportRequest(url: arguments[1]), to: DownloadDestination(path: path),
            options: DownloadOptions(keepsPartialFile: arguments.count == 4))
        report.completed = true
        report.fileSize = response.fileSize
    } catch {
        report.code = error.code.description
        report.message = error.message
        report.resumeByteCount = error.resumeData?.byteCount
        report.partialFileSize = error.resumeData.flatMap { size(of: $0.partialFilePath) }
    }
    await session.shutdown()
} catch {
    report.code = error.code.description
    report.message = error.message
}
report.files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
let encoder = JSONEncoder()
encoder.outputFormatting = .sortedKeys
print(String(decoding: (try? encoder.encode(report)) ?? Data("{}".utf8), as: UTF8.self))
exit(report.completed ? 0 : 1)
