// Curlew — what a process sees of the libcurl floor: run by `make test-libcurl` (and CI) against a
// libcurl below it, where both a session of its own and a provider's default session must refuse with
// `TransportError.unsupportedLibcurl`, naming the version found and the one required.
//
// Prints one line per way in. Exit status: 0 when a supported library started a session, 3 when a library
// below the floor was refused both ways, 1 otherwise.

import Curlew
import CurlewEngine
import Foundation

enum ProbeTarget: TargetType {
    case ping
    var baseURL: URL { URL(string: "http://127.0.0.1:9")! }
    var path: String { "/ping" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}

let library = CurlSession.libcurl
print("libcurl: \(library.summary) (version \(library.version), floor \(LibcurlVersion.minimumSupported), supported: \(library.isSupported))")

var refusals = 0
var started = false
do {
    let session = try CurlSession()
    started = true
    print("CurlSession: started")
    await session.shutdown()
} catch {
    print("CurlSession: \(error)")
    if error.code == .unsupportedLibcurl { refusals += 1 }
}

// A provider's default session is `CurlSession.shared`, which keeps the start-up error for every call.
if library.isSupported { exit(started ? 0 : 1) }
do {
    _ = try await Provider<ProbeTarget>().request(.ping)
    print("Provider: answered")
} catch {
    print("Provider: \(error)")
    if case .transport(let transport) = error, transport.code == .unsupportedLibcurl { refusals += 1 }
}

exit(refusals == 2 ? 3 : 1)
