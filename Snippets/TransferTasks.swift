// Moya's transfer tasks through a provider: a multipart form with a file, a file upload, a download to
// a destination chosen from the response, a download with parameters, progress, and a stubbed download.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation

// A server that reports what it received and serves a report with a suggested file name.
let server = try await LocalHTTPServer.start { request in
    switch request.path {
    case "/reports/latest":
        let query = request.query["format"].map { " as \($0)" } ?? ""
        return .respond(
            status: 200,
            headers: [
                ("Content-Type", "text/csv"),
                ("Content-Disposition", #"attachment; filename="report.csv"; filename*=UTF-8''r%C3%A9sum%C3%A9.csv"#),
            ],
            body: Array("month,total\(query)\njanuary,42\n".utf8))
    default:
        let type = request.header("content-type") ?? "none"
        return .json(#"{"bytes":\#(request.body.count),"type":"\#(type.split(separator: ";").first ?? "")"}"#)
    }
}
let directory = FileManager.default.temporaryDirectory.appending(path: "curlew-transfer-snippet-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let photo = directory.appending(path: "photo.png")
try Data(repeating: 0x89, count: 4096).write(to: photo)
// snippet.show

// snippet.targets
enum Media: TargetType {
    case upload(photo: URL, caption: String)
    case uploadRaw(URL)
    case latestReport(into: URL)
    case report(format: String, into: URL)

    var baseURL: URL { URL(string: "https://media.example.com")! }
    var path: String {
        switch self {
        case .upload, .uploadRaw: "/photos"
        case .latestReport, .report: "/reports/latest"
        }
    }
    var method: HTTPRequest.Method {
        switch self {
        case .upload, .uploadRaw: .post
        case .latestReport, .report: .get
        }
    }
    var headers: [String: String]? { nil }
    var task: RequestTask {
        switch self {
        case .upload(let photo, let caption):
            // A file part (its name and type from the file) and a field.
            .uploadMultipart([
                MultipartFormBodyPart(provider: .file(photo), name: "photo"),
                MultipartFormBodyPart(provider: .data(Data(caption.utf8)), name: "caption"),
            ])
        case .uploadRaw(let file):
            .uploadFile(file)
        case .latestReport(let directory):
            // The file name the server suggests, made safe, inside `directory`.
            .downloadDestination(.suggested(in: directory))
        case .report(let format, let directory):
            .downloadParameters(
                parameters: ["format": .string(format)], encoding: URLEncoding.queryString,
                destination: DownloadDestination { _, response in
                    let name = response.suggestedFilename ?? "report"
                    return (directory.appending(path: "\(format)/\(name)"), [.createIntermediateDirectories, .removePreviousFile])
                })
        }
    }
    var sampleData: Data { Data("month,total\n".utf8) }
}
// snippet.end

// snippet.hide
let provider = Provider<Media>(endpointClosure: server.endpointMapping())
// snippet.show

// snippet.upload
let uploaded = try await provider.request(.upload(photo: photo, caption: "A sunset"))
let receipt = try uploaded.mapString()
// {"bytes":4384,"type":"multipart/form-data"}
// snippet.end
precondition(receipt == #"{"bytes":4384,"type":"multipart/form-data"}"#)
let raw = try await provider.request(.uploadRaw(photo)).mapString()
precondition(raw.contains(#""bytes":4096"#))

// snippet.download
let report = try await provider.request(.latestReport(into: directory))
// The body is in the file; mapping reads it.
let file = report.fileURL  // …/résumé.csv
let text = try report.mapString()
// snippet.end
precondition(file?.lastPathComponent == "résumé.csv" && text == "month,total\njanuary,42\n")
let csv = try await provider.request(.report(format: "csv", into: directory))
let csvText = try csv.mapString()
precondition(csv.fileURL?.deletingLastPathComponent().lastPathComponent == "csv" && csvText.contains("total as csv"))

// snippet.progress
for try await update in provider.progress(for: .upload(photo: photo, caption: "A sunset")) {
    if let response = update.response {
        print("uploaded: \(response.statusCode)")
    } else {
        print("\(update.progress.bytesSent) of \(update.progress.expectedBytesToSend ?? 0) bytes sent")
    }
}
// snippet.end

// snippet.stub
// A stubbed download writes the target's sample data to the destination; nothing is sent.
let stubbed = Provider<Media>(stubClosure: Provider.immediatelyStub)
let sample = try await stubbed.request(.report(format: "stub", into: directory))
// snippet.end
let sampleText = try sample.mapString()
precondition(sampleText == "month,total\n")

// snippet.hide
try await server.shutdown()
