// Curlew — where a provider's response came from, for every kind of call, over a real server and from
// stubs: its origin, and whether it carries what the engine received.

import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

@Suite struct ResponseOriginTests {
    /// A collected response came over the network with the engine's response; a stub's is a sample
    /// without one.
    @Test func aCollectedResponseIsTheNetworksAndAStubsIsASample() async throws {
        try await withServer({ _ in .text("hello") }) { server, session in
            let network = try await Provider<Local>(session: session).request(Local(server, "/hello"))
            #expect(network.origin == .network)
            #expect(network.transportResponse?.httpVersion == .http1_1)
            #expect(network.data == Data("hello".utf8))
            var stubbed = Local(server, "/hello")
            stubbed.sampleData = Data("sample".utf8)
            let sample = try await Provider<Local>(stubClosure: Provider.immediatelyStub, session: session).request(stubbed)
            #expect(sample.origin == .sample)
            #expect(sample.transportResponse == nil)
            #expect(sample.data == Data("sample".utf8))
        }
    }

    /// A streamed response's head is a streamed head, from the network or from a stub; only the
    /// network's carries the engine's response.
    @Test func aStreamedResponseIsAStreamedHeadFromEitherSource() async throws {
        try await withServer({ _ in .text("hello") }) { server, session in
            let (origin, fromNetwork, text) = try await Provider<Local>(session: session).stream(Local(server, "/hello")) {
                response, body in
                (response.origin, response.transportResponse != nil, String(decoding: try await body.collect(upTo: 100), as: UTF8.self))
            }
            #expect(origin == .streamedHead)
            #expect(fromNetwork)
            #expect(text == "hello")
            var stubbed = Local(server, "/hello")
            stubbed.sampleData = Data("sample".utf8)
            let stub = try await Provider<Local>(stubClosure: Provider.immediatelyStub, session: session).stream(stubbed) {
                response, body in
                (response.origin, response.transportResponse != nil, String(decoding: try await body.collect(upTo: 100), as: UTF8.self))
            }
            #expect(stub.0 == .streamedHead)
            #expect(!stub.1)
            #expect(stub.2 == "sample")
        }
    }

    /// A download task's response is a download, its body in the file, from the network or a stub.
    @Test func aDownloadsResponseIsADownloadFromEitherSource() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-origin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withServer({ _ in .text("file body") }) { server, session in
            let network = try await Provider<Local>(session: session).request(
                Local(server, "/f", task: .downloadDestination(DownloadDestination(path: directory.appendingPathComponent("n").path))))
            #expect(network.origin == .download)
            #expect(network.transportResponse != nil)
            #expect(network.data.isEmpty)
            #expect(try network.bodyData() == Data("file body".utf8))
            var stubbed = Local(server, "/f", task: .downloadDestination(DownloadDestination(path: directory.appendingPathComponent("s").path)))
            stubbed.sampleData = Data("sample body".utf8)
            let sample = try await Provider<Local>(stubClosure: Provider.immediatelyStub, session: session).request(stubbed)
            #expect(sample.origin == .download)
            #expect(sample.transportResponse == nil)
            #expect(try sample.bodyData() == Data("sample body".utf8))
        }
    }

    /// A response built by hand is a sample, or the network's when given what the engine received.
    @Test func aResponseBuiltByHandSaysWhereItCameFrom() {
        #expect(ApiResponse(statusCode: 200, data: Data()).origin == .sample)
        let received = TransportResponse(status: .ok, body: Data("x".utf8), httpVersion: .http2)
        #expect(ApiResponse(statusCode: 200, data: Data("x".utf8), transportResponse: received).origin == .network)
        #expect(ApiResponse(received, request: TransportRequest(url: "http://127.0.0.1:9/")).origin == .network)
    }
}
