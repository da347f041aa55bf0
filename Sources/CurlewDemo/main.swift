// Curlew — the demo walk-through (`make demo`): real calls against an embedded GitHub-like API.

import Curlew
import CurlewTesting
import Foundation

let server = try await DemoAPI.start()
print("Embedded demo API listening on \(server.baseURL)")

func section(_ title: String) { print("\n== \(title) ==") }
func text(_ response: TransportResponse) -> String { String(decoding: response.body, as: UTF8.self) }

section("1. The engine: CurlSession.execute")
let session = try CurlSession()
let zen = try await session.execute(TransportRequest(url: server.url("/zen")))
print("GET /zen -> \(zen.status.code) \(zen.httpVersion.rawValue): \"\(text(zen))\"")
print("   new connection, total \(zen.timings.total), first byte after \(zen.timings.firstByte)")
let again = try await session.execute(TransportRequest(url: server.url("/zen")))
print("GET /zen again -> connection reused: \(again.connectionReused), total \(again.timings.total)")

section("2. JSON and status codes")
let profile = try await session.execute(TransportRequest(url: server.url("/users/octocat")))
print("GET /users/octocat -> \(profile.status.code) \(profile.headerFields[.contentType] ?? ""): \(text(profile))")
let login = try TransportRequest(
    url: server.url("/login"), method: .post, headers: [("Content-Type", "application/json")],
    body: .string(#"{"username":"octocat","password":"guess"}"#))
let denied = try await session.execute(login)
print("POST /login (wrong password) -> \(denied.status.code): \(text(denied))")
let broken = try await session.execute(TransportRequest(url: server.url("/broken")))
print("GET /broken -> \(broken.status.code), \(broken.body.count) bytes of HTML")

section("3. Bad input is refused before anything is sent")
do {
    _ = try TransportRequest(url: server.url("/zen"), headers: [("X-Injected", "a\r\nEvil: yes")])
} catch {
    print("header with CR/LF -> \(error)")
}
do {
    _ = try await session.execute(TransportRequest(url: "ftp://127.0.0.1/file"))
} catch {
    print("ftp:// URL -> \(error)")
}

section("4. Cancelling a slow call")
let started = ContinuousClock.now
let slow = Task { try await session.execute(TransportRequest(url: server.url("/slow"))) }
try await Task.sleep(for: .milliseconds(200))
let cancelledAt = ContinuousClock.now
slow.cancel()
do {
    _ = try await slow.value
    print("the slow call finished?")
} catch {
    print("cancelled \(ContinuousClock.now - cancelledAt) after cancel() (\(ContinuousClock.now - started) in all): \(error)")
}

let statistics = session.statistics
print("\nSession: \(statistics.completedTransfers) responses, \(statistics.connectionsOpened) connections opened, loop CPU \(statistics.loopCPUTime)")
await session.shutdown()
try await server.shutdown()
print("Done.")
