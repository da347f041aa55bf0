// Curlew — an easy handle whose transfer ended while paused starts its next transfer clean: libcurl
// before 8.1.0 kept the bytes of a paused write in the handle when the HTTP/2 connection still carried
// other streams, and handed them to the handle's next transfer (CurlQuirks.pausedBytesOutliveTheTransfer).

@testable import CurlewEngine
import CurlewTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite struct PausedHandleReuseTests {
    /// Three streams on one HTTP/2 connection against stream_server.py. The keeper stays paused throughout,
    /// so the connection stays in use; the abandoned stream pauses with bytes in libcurl's pause buffer
    /// and its reader leaves; the next request takes the abandoned one's handle (the pool hands out the
    /// handle returned last), pauses with a body larger than any stream window arriving (its server
    /// blocks), then reads it: exactly its own bytes.
    /// Run as the loaded libcurl needs, and with the drain forced, which holds on every version.
    @Test(arguments: [false, true])
    func aStreamAbandonedWhilePausedLeavesNothingForItsHandlesNextTransfer(drainForced: Bool) async throws {
        try await withStreamServerAndSession(.http2, configure: {
            $0.streamBufferSize = 16 * 1024
            if drainForced { $0.quirks.pausedBytesOutliveTheTransfer = true }
        }) { server, session in
            let keeper = UUID().uuidString
            try await session.perform(TransportRequest(url: server.url("/bytes?n=268435456&tag=\(keeper)"))) { head, _ in
                #expect(head.httpVersion == .http2)
                _ = try await server.stats { $0.tags[keeper]?.blocked == true }
                let abandoned = UUID().uuidString
                try await session.perform(TransportRequest(url: server.url("/bytes?n=268435456&random=1&tag=\(abandoned)"))) {
                    head, _ in
                    #expect(head.httpVersion == .http2)
                    _ = try await server.stats { $0.tags[abandoned]?.blocked == true }
                }
                let handlesBefore = session.statistics.handlesCreated
                let next = UUID().uuidString
                let count = 64 << 20
                let (received, matching) = try await session.perform(TransportRequest(url: server.url("/bytes?n=\(count)&length=1&tag=\(next)"))) {
                    head, body in
                    #expect(head.httpVersion == .http2)
                    // The server blocks once nothing is read: the transfer paused, libcurl holds what came.
                    _ = try await server.stats { $0.tags[next]?.blocked == true }
                    return try await compareWithPattern(body)
                }
                #expect(session.statistics.handlesCreated == handlesBefore)
                #expect(received == count)
                #expect(matching == count)
            }
        }
    }
}

/// Reads `body` to its end against stream_server.py's pattern (byte i is i % 251), chunk by chunk rather
/// than whole (other tests measure this process's peak memory): the bytes received, and how many came
/// before the first piece that differed from the pattern.
private func compareWithPattern(_ body: ResponseBodyStream) async throws -> (received: Int, matching: Int) {
    let piece = 1 << 16
    let block = streamPattern(count: piece + 251)
    var received = 0
    var matching: Int?
    for try await chunk in body {
        var offset = 0
        while matching == nil, offset < chunk.count {
            let count = min(chunk.count - offset, piece)
            let start = (received + offset) % 251
            let equal = chunk.withUnsafeBytes { bytes in
                block.withUnsafeBytes { pattern in
                    guard let bytes = bytes.baseAddress, let pattern = pattern.baseAddress else { return false }
                    return memcmp(bytes + offset, pattern + start, count) == 0
                }
            }
            if !equal { matching = received + offset }
            offset += count
        }
        received += chunk.count
    }
    return (received, matching ?? received)
}
