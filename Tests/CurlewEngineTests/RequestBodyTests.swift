// Curlew — what a request body says about itself, for every kind, without sockets.

@testable import CurlewEngine
import FoundationEssentials
import HTTPTypes
import Testing

@Suite struct RequestBodyTests {
    @Test func bytesReportTheirLengthAndBytesWithAndWithoutTrailers() {
        let plain = TransportRequest.Body.bytes([1, 2, 3])
        #expect(plain.knownLength == 3)
        #expect(plain.inMemoryBytes == Data([1, 2, 3]))
        #expect(plain.isReplayable)
        #expect(!plain.hasTrailers)
        #expect(plain.trailerSource == nil)
        #expect(plain.description == "3 bytes")

        var fields = HTTPFields()
        fields[HTTPField.Name("X-Checksum")!] = "abc"
        let withTrailers = plain.trailers(fields)
        #expect(withTrailers.knownLength == 3)
        #expect(withTrailers.inMemoryBytes == Data([1, 2, 3]))
        #expect(withTrailers.isReplayable)
        #expect(withTrailers.hasTrailers)
        #expect(withTrailers.trailerSource?.declared == fields)
        #expect(withTrailers.description == "3 bytes, with trailers")
        #expect(withTrailers != plain)
        #expect(TransportRequest.Body.bytes([1, 2, 3]) == plain)
    }

    @Test func aFileIsNamedAndItsRegionCounted() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-body-\(UInt64.random(in: 1...UInt64.max))").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: 100)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let body = try TransportRequest.Body.file(path, range: 10..<40)
        #expect(body.knownLength == 30)
        #expect(body.filePath == path)
        #expect(body.inMemoryBytes == nil)
        #expect(body.isReplayable)
        #expect(!body.isStream)
        #expect(body.description == "file \(path) (bytes 10..<40)")
        let withTrailers = body.trailers { [:] }
        #expect(withTrailers.filePath == path)
        #expect(withTrailers.hasTrailers)
        #expect(withTrailers.trailerSource?.declared == nil)
    }

    @Test func aStreamKeepsItsLengthAndReplayability() {
        let once = TransportRequest.Body.stream(length: 5) { _ in }
        #expect(once.knownLength == 5)
        #expect(once.isStream)
        #expect(!once.isReplayable)
        #expect(once.inMemoryBytes == nil)
        #expect(once.filePath == nil)
        #expect(once.description == "stream of 5 bytes")
        let again = TransportRequest.Body.stream(replayable: true) { _ in }
        #expect(again.knownLength == nil)
        #expect(again.isReplayable)
        #expect(again.description == "stream of unknown length")
        // Streams compare by their producer.
        #expect(once == once)
        #expect(once != again)
        #expect(once.trailers { [:] }.isStream)
    }

    @Test func eachDirectionOfAStreamTakesItsOwnLimit() async throws {
        var configuration = SessionConfiguration()
        #expect(configuration.streamBufferSize == 192 * 1024)
        #expect(configuration.requestBodyBufferSize == 1024 * 1024)
        configuration.streamBufferSize = 10_000
        configuration.requestBodyBufferSize = 30_000
        let session = try CurlSession(configuration: configuration)
        let request = TransportRequest(url: "http://127.0.0.1:9/", method: .post, body: .stream { _ in })
        let prepared = try PreparedRequest(request, urls: ParsedURLCache(capacity: 0))
        let exchange = try await session.makeExchange(
            prepared, streamedResponse: true, deadline: nil, isRedirectHop: false, submitted: 0)
        exchange.state.withLock { state in
            #expect(state.machine.response.high == 10_000)
            #expect(state.machine.response.cap == configuration.maxStreamBufferSize)
            #expect(state.machine.request.buffer.high == 30_000)
        }
        await session.shutdown()
    }
}
