// Curlew — a response body detached from the closure it was handed to, against real servers over HTTP/1.1
// and HTTP/2: read after `perform` returned and on another task, its trailers, dropping it aborts, and
// what cannot be detached.

@testable import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

@Suite struct DetachedBodyTests {
    /// `perform` returns with the head; another task then reads the whole body (byte i is i % 251), the
    /// transfer completes (not cancelled) and its connection carries the next request.
    @Test(arguments: Wire.allCases)
    func aDetachedBodyIsReadAfterPerformReturned(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let total = 300_000
            let (head, body) = try await session.perform(TransportRequest(url: server.url("/bytes?n=\(total)&length=1"))) {
                head, body in (head, try body.detach())
            }
            #expect(head.status == .ok)
            #expect(body.expectedLength == total)
            let reader = Task {
                var bytes: [UInt8] = []
                for try await chunk in body { bytes += chunk }
                return bytes
            }
            let bytes = try await reader.value
            #expect(bytes.count == total)
            #expect(bytes.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
            #expect(await eventually { session.statistics.activeTransfers == 0 })
            #expect(session.statistics.cancelledTransfers == 0)
            // Where a streamed response to an https host goes over an HTTP/1.1 connection of its own
            // (CurlQuirks.streamedResponsesAvoidHTTP2), so does the next: a streamed response too.
            let next = TransportRequest(url: server.url("/bytes?n=10&length=1"))
            if wire == .http2 && CurlQuirks.current.streamedResponsesAvoidHTTP2 {
                let reused = try await session.perform(next) { head, body in
                    #expect(head.httpVersion == .http1_1)
                    let bytes = try await body.collect(upTo: 100)
                    #expect(bytes.count == 10)
                    return head.connectionReused
                }
                #expect(reused)
            } else {
                #expect(try await session.execute(next).connectionReused)
            }
        }
    }

    /// The trailer fields of a detached body arrive after its last chunk.
    @Test(arguments: Wire.allCases)
    func aDetachedBodysTrailersFollowItsLastChunk(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let body = try await session.perform(TransportRequest(url: server.url("/trailers"))) { _, body in try body.detach() }
            #expect(body.trailerFields == nil)
            var text: [UInt8] = []
            for try await chunk in body { text += chunk }
            #expect(String(decoding: text, as: UTF8.self) == "Response body")
            #expect(body.trailerFields?[HTTPField.Name("X-Checksum")!] == "abc123")
        }
    }

    /// Dropping a detached body after one chunk of 16 MiB aborts its transfer: the session ends it as
    /// cancelled and holds no transfer.
    @Test(arguments: Wire.allCases)
    func droppingADetachedBodyAbortsItsTransfer(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            var body: DetachedResponseBody? = try await session.perform(TransportRequest(url: server.url("/bytes?n=\(16 << 20)"))) {
                _, body in try body.detach()
            }
            var iterator = body?.makeAsyncIterator()
            let first = try await iterator?.next()
            #expect((first?.count ?? 0) > 0)
            iterator = nil
            body = nil
            #expect(await eventually { session.statistics.activeTransfers == 0 })
            #expect(session.statistics.cancelledTransfers == 1)
            #expect(session.statistics.completedTransfers == 0)
        }
    }

    /// A body whose reading began cannot be detached, nor one detached already: both throw
    /// `bodyUnavailable`, and the reading goes on.
    @Test func aBodyDetachesOnceAndOnlyBeforeItsReadingBegins() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let codes = try await session.perform(TransportRequest(url: server.url("/bytes?n=1000&length=1"))) { _, body in
                var iterator = body.makeAsyncIterator()
                let first = try await iterator.next()
                var codes: [TransportError.Code?] = []
                do throws(TransportError) {
                    _ = try body.detach()
                    codes.append(nil)
                } catch {
                    codes.append(error.code)
                }
                var count = first?.count ?? 0
                while let chunk = try await iterator.next() { count += chunk.count }
                #expect(count == 1000)
                return codes
            }
            #expect(codes == [.bodyUnavailable])
            let twice = try await session.perform(TransportRequest(url: server.url("/bytes?n=10&length=1"))) { _, body in
                let detached = try body.detach()
                do throws(TransportError) {
                    _ = try body.detach()
                    return (detached, nil as TransportError.Code?)
                } catch {
                    return (detached, error.code)
                }
            }
            #expect(twice.1 == .bodyUnavailable)
            var count = 0
            for try await chunk in twice.0 { count += chunk.count }
            #expect(count == 10)
        }
    }

    /// A body from memory (a test transport's, a stub's) detaches too, and reads the same.
    @Test func aBodyFromMemoryDetaches() async throws {
        let body = try ResponseBodyStream(data: Data("in memory".utf8), chunkSize: 4).detach()
        var chunks: [String] = []
        for try await chunk in body { chunks.append(String(decoding: chunk, as: UTF8.self)) }
        #expect(chunks == ["in m", "emor", "y"])
    }
}
