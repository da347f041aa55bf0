// Curlew — an easy handle kept with a plain request's options (no reset between plain requests) never
// lends them to the next request: each request reaches the server exactly as given, whatever ran before it
// on the same handle.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

@Suite struct HandleReuseTests {
    static let echo: @Sendable (ServerRequest) async -> ServerReply = { request in
        .respond(status: 200, headers: [("X-Method", request.method)], body: Array("body of \(request.path)".utf8))
    }

    /// The header names the server received, lowercased, in order, without Host.
    static func names(_ request: ServerRequest) -> [String] {
        request.headers.map { $0.name.lowercased() }.filter { $0 != "host" }
    }

    /// Requests one after another on one session, so one pooled handle carries them all: plain ones with and
    /// without fields, and between them requests that set options a plain one never does (HEAD, a body, a
    /// per-request option, an empty value, an overridden default). Each must arrive as given.
    @Test func eachRequestArrivesAsGivenWhateverTheHandleRanBefore() async throws {
        try await withServerAndSession(handler: Self.echo) { server, session in
            func send(_ request: TransportRequest) async throws -> (TransportResponse, ServerRequest) {
                let response = try await session.execute(request)
                return (response, try #require(server.requests.last))
            }
            let defaults = ["accept", "user-agent", "accept-encoding"]

            var request = TransportRequest(url: server.url("/first"))
            request.headerFields[HTTPField.Name("X-First")!] = "1"
            var (response, received) = try await send(request)
            #expect(response.effectiveURL == server.url("/first"))
            #expect(received.method == "GET")
            #expect(Self.names(received) == defaults + ["x-first"])
            #expect(String(decoding: response.body, as: UTF8.self) == "body of /first")

            // Plain, no fields: the last request's list must not come along.
            (response, received) = try await send(TransportRequest(url: server.url("/plain")))
            // The effective URL is this request's, not the last one's.
            #expect(response.effectiveURL == server.url("/plain"))
            #expect(Self.names(received) == defaults)
            #expect(received.header("X-First") == nil)
            #expect(String(decoding: response.body, as: UTF8.self) == "body of /plain")

            (response, received) = try await send(TransportRequest(url: server.url("/head"), method: .head))
            #expect(received.method == "HEAD")
            #expect(response.body.isEmpty)

            // After a HEAD: a GET gets its body again.
            (response, received) = try await send(TransportRequest(url: server.url("/after-head")))
            #expect(received.method == "GET")
            #expect(String(decoding: response.body, as: UTF8.self) == "body of /after-head")

            request = TransportRequest(url: server.url("/post"), method: .post, body: .data(Data("twelve bytes".utf8)))
            request.headerFields[.contentType] = "text/plain"
            (response, received) = try await send(request)
            #expect(received.method == "POST")
            #expect(received.body == Array("twelve bytes".utf8))
            #expect(received.header("Content-Type") == "text/plain")

            // After a body: a plain GET sends none and no body fields.
            (response, received) = try await send(TransportRequest(url: server.url("/after-post")))
            #expect(received.method == "GET")
            #expect(received.body.isEmpty)
            #expect(Self.names(received) == defaults)

            request = TransportRequest(url: server.url("/options"))
            request.options.connectTimeout = .seconds(7)
            request.timeout = .seconds(30)
            (response, received) = try await send(request)
            #expect(received.uri == "/options")

            request = TransportRequest(url: server.url("/empty-value"))
            request.headerFields[HTTPField.Name("X-Empty")!] = ""
            request.headerFields[.userAgent] = "own-agent/2"
            (response, received) = try await send(request)
            #expect(Self.names(received) == ["accept", "accept-encoding", "x-empty", "user-agent"])
            #expect(received.header("X-Empty") == "")
            #expect(received.headers.filter { $0.name.lowercased() == "user-agent" }.map(\.value) == ["own-agent/2"])

            (response, received) = try await send(TransportRequest(url: server.url("/last")))
            #expect(Self.names(received) == defaults)
            #expect(received.header("User-Agent") != "own-agent/2")
            // All of it on one connection: the handle and the connection were reused throughout.
            #expect(Set(server.requests.map(\.connectionID)).count == 1)
            #expect(server.requests.count == 9)
        }
    }

    /// POSTs of bodies in memory keep their handle's options for the next such POST: each sends its own
    /// body and length, and a PUT or a GET between them gets its own method and no body of theirs.
    @Test func postsOfBodiesInMemorySendTheirOwnBodies() async throws {
        try await withServerAndSession(handler: Self.echo) { server, session in
            let large = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let cases: [(method: HTTPRequest.Method, path: String, body: Data?)] = [
                (.post, "/large", large), (.post, "/small", Data("tiny".utf8)), (.put, "/put", Data("put body".utf8)),
                (.post, "/after-put", Data("posted again".utf8)), (.get, "/get", nil), (.post, "/empty", Data()),
                (.post, "/last", large.prefix(100)),
            ]
            for (method, path, body) in cases {
                let request = TransportRequest(url: server.url(path), method: method, body: body.map { .data($0) })
                let response = try await session.execute(request)
                #expect(String(decoding: response.body, as: UTF8.self) == "body of \(path)")
                let received = try #require(server.requests.last)
                #expect(received.method == method.rawValue, "\(path)")
                #expect(received.body == Array(body ?? Data()), "\(path)")
                #expect(received.header("Content-Length") == body.map { "\($0.count)" }, "\(path)")
                #expect(received.header("Content-Type") == nil, "\(path)")
            }
            #expect(Set(server.requests.map(\.connectionID)).count == 1)
        }
    }

    /// A plain request's timeout is not left on the handle for the next plain request without one (a
    /// session without a total timeout): the second request outlives the first one's libcurl backstop
    /// (its timeout plus a second).
    @Test func aKeptHandleDoesNotKeepTheLastTimeout() async throws {
        var configuration = SessionConfiguration()
        configuration.totalTimeout = nil
        try await withServerAndSession(configuration: configuration, handler: { request in
            if request.path == "/slow" { try? await Task.sleep(for: .seconds(5)) }
            return .text("done")
        }) { server, session in
            var first = TransportRequest(url: server.url("/quick"))
            // Generous: the whole suite runs beside this test. Its backstop is 4 s; the next request takes 5.
            first.timeout = .seconds(3)
            #expect(try await session.execute(first).status.code == 200)
            let response = try await session.execute(TransportRequest(url: server.url("/slow")))
            #expect(response.status.code == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "done")
        }
    }
}
