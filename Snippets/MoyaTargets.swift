// Moya's "Targets" page in Curlew: the GitHub target piece by piece, every kind of request task, a
// custom parameter encoding, sample data, headers, the provider and escaping path segments.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation

// Answers the GitHub paths, and echoes what any other request sent: method and URI, Content-Type, body.
let server = try await LocalHTTPServer.start { request in
    switch request.path {
    case "/zen": return .text("Design for failure.")
    case let path where path.hasPrefix("/users/") && path.hasSuffix("/repos"): return .json(#"[{"name":"curlew"}]"#)
    case let path where path.hasPrefix("/users/"): return .json(#"{"login":"octocat","id":1}"#)
    case let path where path.hasPrefix("/repos/"): return .json(#"[{"name":"main"}]"#)
    case "/exports/report":
        let month = request.query["month"] ?? "all"
        return .respond(
            status: 200, headers: [("Content-Type", "text/csv"), ("Content-Disposition", #"attachment; filename="report-\#(month).csv""#)],
            body: Array("month,total\n\(month),42\n".utf8))
    default:
        return .text("\(request.method) \(request.uri)\n\(request.header("Content-Type") ?? "-")\n\(request.bodyText)")
    }
}
let staging = URL(string: server.baseURL)!
let folder = FileManager.default.temporaryDirectory.appending(path: "curlew-moya-targets-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let notesFile = folder.appending(path: "notes.txt")
try Data("Curlews probe the mud with long curved bills.\n".utf8).write(to: notesFile)
let bigFile = folder.appending(path: "big.bin")
try Data(repeating: 7, count: 1 << 20).write(to: bigFile)
// snippet.show

// snippet.enum
enum GitHub {
    case zen
    case userProfile(String)
    case userRepositories(String)
    case branches(String, Bool)
}
// snippet.end

// snippet.base-url
extension GitHub: TargetType {
    var baseURL: URL { URL(string: "https://api.github.com")! }
}
// snippet.end

// snippet.path
extension GitHub {
    var path: String {
        switch self {
        case .zen: "/zen"
        case .userProfile(let name): "/users/\(name.urlEscaped)"
        case .userRepositories(let name): "/users/\(name.urlEscaped)/repos"
        case .branches(let repo, _): "/repos/\(repo.urlEscaped)/branches"
        }
    }
}
// snippet.end

// snippet.method
extension GitHub {
    var method: HTTPRequest.Method { .get }
}
// snippet.end

// snippet.task
extension GitHub {
    var task: RequestTask {
        switch self {
        case .userRepositories:
            .requestParameters(parameters: ["sort": "pushed"], encoding: URLEncoding.default)
        case .branches(_, let protected):
            // A Bool stays a Bool: URLEncoding writes it as 1/0, or as true/false with `.literal`.
            .requestParameters(parameters: ["protected": .bool(protected)], encoding: URLEncoding(boolEncoding: .literal))
        default:
            .requestPlain
        }
    }
}
// snippet.end

// snippet.sample-data
extension GitHub {
    var sampleData: Data {
        switch self {
        case .zen: Data("Half measures are as bad as nothing at all.".utf8)
        case .userProfile(let name): Data(#"{"login": "\#(name)", "id": 100}"#.utf8)
        case .userRepositories: Data(#"[{"name": "Repo Name"}]"#.utf8)
        case .branches: Data(#"[{"name": "master"}]"#.utf8)
        }
    }
}
// snippet.end

// snippet.headers
extension GitHub {
    var headers: [String: String]? { ["Content-Type": "application/json"] }
}
// snippet.end

// snippet.provider
// snippet.hide
do {
    // snippet.show
    let gitHubProvider = Provider<GitHub>()
    // snippet.hide
    precondition(gitHubProvider.endpoint(.zen).url == "https://api.github.com/zen")
}
// The snippet's calls go to the loopback server.
let gitHubProvider = Provider<GitHub>(endpointClosure: { Endpoint.default(for: $0, baseURL: staging) })
// snippet.show
// snippet.end

// snippet.calls
let zen = try await gitHubProvider.request(.zen).mapString()
let branches = try await gitHubProvider.request(.branches("curlew", true))
print(zen, branches.request?.url ?? "")  // .../repos/curlew/branches?protected=true
precondition(branches.request?.url.hasSuffix("/repos/curlew/branches?protected=true") == true)
// snippet.end

// snippet.url-escaped
extension String {
    /// This text as one path segment: every byte but A-Z a-z 0-9 - . _ ~ percent-escaped (a `/` too).
    var urlEscaped: String { URLEncoding.escape(self) }
}
// snippet.end

// snippet.escaping
// The path is escaped when it is joined to the base URL (a space, `?`, `#`, non-ASCII), and escapes
// already in it are kept, so a name escaped by `urlEscaped` is not escaped twice.
precondition(Endpoint.defaultURL(for: GitHub.userProfile("octo cat")) == "https://api.github.com/users/octo%20cat")
precondition(Endpoint.defaultURL(for: GitHub.branches("a/b?c", false)) == "https://api.github.com/repos/a%2Fb%3Fc/branches")
// snippet.end

// snippet.request-tasks
struct Note: Encodable, Sendable {
    let title: String
    let created: Date
}

enum Notes: TargetType {
    case ping
    case upload(Data)
    case create(Note)
    case createDated(Note)
    case search(String)
    case uploadTagged(Data, tag: String)
    case publish(title: String, draft: Bool)

    var baseURL: URL { URL(string: "https://notes.example.com")! }
    var path: String { "/notes" }
    var method: HTTPRequest.Method {
        switch self {
        case .ping, .search: .get
        default: .post
        }
    }
    var task: RequestTask {
        switch self {
        case .ping:
            // Nothing to send.
            .requestPlain
        case .upload(let data):
            // This data as the body.
            .requestData(data)
        case .create(let note):
            // An Encodable as JSON (sorted keys, default strategies), Content-Type: application/json.
            .requestJSONEncodable(note)
        case .createDated(let note):
            // An Encodable as JSON, with your encoder.
            .requestCustomJSONEncodable(note, encoder: Self.isoEncoder)
        case .search(let text):
            // Parameters with an encoding: URLEncoding puts them in the query of a GET, in a form body otherwise.
            .requestParameters(parameters: ["q": .string(text), "tags": ["swift", "http"]], encoding: URLEncoding.default)
        case .uploadTagged(let data, let tag):
            // Data as the body, and parameters in the query string.
            .requestCompositeData(bodyData: data, urlParameters: ["tag": .string(tag)])
        case .publish(let title, let draft):
            // Parameters in the body with their encoding, and others in the query string.
            .requestCompositeParameters(
                bodyParameters: ["title": .string(title)], bodyEncoding: JSONEncoding.default,
                urlParameters: ["draft": .bool(draft)])
        }
    }
    var headers: [String: String]? { nil }

    static var isoEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        return encoder
    }
}
// snippet.end

// snippet.hide
let notes = Provider<Notes>(endpointClosure: { Endpoint.default(for: $0, baseURL: staging) })
let note = Note(title: "Curlew", created: Date(timeIntervalSince1970: 0))
let sentByTask: [(Notes, String)] = [
    (.ping, "GET /notes\n-\n"),
    (.upload(Data("raw bytes".utf8)), "POST /notes\n-\nraw bytes"),
    (.create(note), #"POST /notes\#napplication/json\#n{"created":-978307200,"title":"Curlew"}"#),
    (.createDated(note), #"POST /notes\#napplication/json\#n{"created":"1970-01-01T00:00:00Z","title":"Curlew"}"#),
    (.search("curlew"), "GET /notes?q=curlew&tags%5B%5D=swift&tags%5B%5D=http\n-\n"),
    (.uploadTagged(Data("raw".utf8), tag: "birds"), "POST /notes?tag=birds\n-\nraw"),
    (.publish(title: "Curlew", draft: true), #"POST /notes?draft=1\#napplication/json\#n{"title":"Curlew"}"#),
]
for (target, expected) in sentByTask {
    let echoed = try await notes.request(target).mapString()
    precondition(echoed == expected, "\(target): \(echoed)")
}
// snippet.show

// snippet.custom-encoding
// Your own encoding: here, parameters as a small XML document in the body.
struct XMLEncoding: ParameterEncoding {
    func encode(_ request: TransportRequest, with parameters: [String: JSONValue]?) throws -> TransportRequest {
        var request = request
        let elements = (parameters ?? [:]).sorted { $0.key < $1.key }.map { key, value in
            "<\(key)>\(Self.escaped(value.stringValue ?? "\(value)"))</\(key)>"
        }
        request.body = .string("<parameters>\(elements.joined())</parameters>")
        try request.setValue("application/xml", forHTTPHeaderField: "Content-Type")
        return request
    }

    static func escaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }
}

struct Feed: TargetType {
    var baseURL: URL { URL(string: "https://feeds.example.com")! }
    var path: String { "/subscribe" }
    var method: HTTPRequest.Method { .post }
    var task: RequestTask { .requestParameters(parameters: ["url": "https://blog.example/rss?a=1&b=2"], encoding: XMLEncoding()) }
    var headers: [String: String]? { nil }
}
// snippet.end

// snippet.transfer-tasks
enum Archive: TargetType {
    case uploadForm(file: URL, caption: String)
    case uploadFormToAlbum(file: URL, caption: String, album: String)
    case uploadFile(URL)
    case download(to: URL)
    case downloadMonth(String, into: URL)

    var baseURL: URL { URL(string: "https://archive.example.com")! }
    var path: String {
        switch self {
        case .uploadForm, .uploadFormToAlbum, .uploadFile: "/uploads"
        case .download, .downloadMonth: "/exports/report"
        }
    }
    var method: HTTPRequest.Method {
        switch self {
        case .uploadForm, .uploadFormToAlbum, .uploadFile: .post
        case .download, .downloadMonth: .get
        }
    }
    var headers: [String: String]? { nil }
    var task: RequestTask {
        switch self {
        case .uploadForm(let file, let caption):
            // multipart/form-data: a data part and a file part (file name and type from the file).
            .uploadMultipart([
                MultipartFormBodyPart(provider: .data(Data(caption.utf8)), name: "caption"),
                MultipartFormBodyPart(provider: .file(file), name: "attachment"),
            ])
        case .uploadFormToAlbum(let file, let caption, let album):
            // The same form, and parameters in the query string.
            .uploadCompositeMultipart(
                [
                    MultipartFormBodyPart(provider: .data(Data(caption.utf8)), name: "caption"),
                    MultipartFormBodyPart(provider: .file(file), name: "attachment", mimeType: "text/plain"),
                ],
                urlParameters: ["album": .string(album)])
        case .uploadFile(let file):
            // The file as the body, read while it is sent.
            .uploadFile(file)
        case .download(let destination):
            // Alamofire's destination closure: a temporary URL and the response in, the file's URL and options out.
            .downloadDestination(
                DownloadDestination { _, _ in (destination, [.createIntermediateDirectories, .removePreviousFile]) })
        case .downloadMonth(let month, let directory):
            // Parameters sent with the request; the file named as the server suggests, inside `directory`.
            .downloadParameters(
                parameters: ["month": .string(month)], encoding: URLEncoding.queryString,
                destination: .suggested(in: directory))
        }
    }
}
// snippet.end

// snippet.hide
let archive = Provider<Archive>(endpointClosure: { Endpoint.default(for: $0, baseURL: staging) })
// snippet.show

// snippet.transfers
let form = try await archive.request(.uploadForm(file: notesFile, caption: "field notes")).mapString()
precondition(form.contains("multipart/form-data; boundary=curlew-") && form.contains(#"filename="notes.txt""#))
let album = try await archive.request(.uploadFormToAlbum(file: notesFile, caption: "field notes", album: "birds"))
precondition(album.request?.url.hasSuffix("/uploads?album=birds") == true)
let raw = try await archive.request(.uploadFile(notesFile)).mapString()
precondition(raw.hasSuffix("Curlews probe the mud with long curved bills.\n"))

let report = try await archive.request(.download(to: folder.appending(path: "reports/all.csv")))
print(report.fileURL?.path ?? "", try report.mapString())  // .../reports/all.csv month,total...
let march = try await archive.request(.downloadMonth("march", into: folder))
precondition(march.fileURL?.lastPathComponent == "report-march.csv")

// Progress through the provider: the last element carries the response.
for try await update in archive.progress(for: .uploadFile(bigFile)) {
    if let response = update.response {
        precondition(response.statusCode == 200 && update.progress.bytesSent == 1 << 20)
    } else {
        print("\(update.progress.bytesSent) of \(update.progress.expectedBytesToSend ?? 0) bytes sent")
    }
}
// snippet.end

// snippet.hide
let feeds = Provider<Feed>(endpointClosure: { Endpoint.default(for: $0, baseURL: staging) })
let xml = try await feeds.request(Feed()).mapString()
precondition(xml == "POST /subscribe\napplication/xml\n<parameters><url>https://blog.example/rss?a=1&amp;b=2</url></parameters>")
try await server.shutdown()
