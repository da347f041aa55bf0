// Curlew — what a fresh process sees of the process-wide session: run by SharedSessionTests. A provider
// made without a session must start nothing (no session, no loop thread) until its first request, and a
// provider's `baseURL` must send a target naming another host to the configured one.
//
// Usage: SharedSessionProbe URL   (a server answering `GET /ping`). Prints one JSON object.

import Curlew
import CurlewEngine
import Foundation

/// A target naming a host that does not resolve: only the provider's `baseURL` can make it reach a server.
enum ProbeTarget: TargetType {
    case ping
    var baseURL: URL { URL(string: "https://upstream.invalid/v1")! }
    var path: String { "/ping" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}

/// The process's threads, from /proc.
func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
}

guard CommandLine.arguments.count == 2, let base = URL(string: CommandLine.arguments[1]) else {
    FileHandle.standardError.write(Data("usage: SharedSessionProbe URL\n".utf8))
    exit(2)
}
/// Makes a provider, then calls it once; what happened, as JSON. In a function: its values end with its
/// frame, before the process exits (values held by the async top-level code would count as leaks).
func probe(_ base: URL) async -> Data {
    var report: [String: String] = [:]
    let threadsBefore = threadCount()
    let provider = Provider<ProbeTarget>(baseURL: base)
    report["threadsAddedByProvider"] = String(threadCount() - threadsBefore)
    report["sharedMadeByProvider"] = String(CurlSession.hasMadeShared)
    do {
        let response = try await provider.request(.ping)
        report["status"] = String(response.statusCode)
        report["body"] = String(decoding: response.data, as: UTF8.self)
        report["url"] = response.request?.url ?? ""
    } catch {
        report["error"] = "\(error)"
    }
    report["sharedMadeByRequest"] = String(CurlSession.hasMadeShared)
    return (try? JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])) ?? Data("{}".utf8)
}

FileHandle.standardOutput.write(await probe(base))
