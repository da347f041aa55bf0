// Curlew — a paused HTTP/2 download keeps every byte while uploads end beside it: before 8.1.0 libcurl's
// end of an upload read through the read callback could replace the bytes it kept for a paused stream on
// the same connection (CurlQuirks.uploadEndDropsPausedStreamData), so such uploads go over HTTP/1.1.

@testable import CurlewEngine
import CurlewTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite struct UploadEndBesidePausedStreamTests {
    /// A download over HTTP/2 read by a reader that sleeps after every chunk, so Curlew pauses and resumes
    /// it and libcurl's buffer for it fills while other transfers read the connection; meanwhile streamed
    /// uploads of no declared length, written in three pieces, end on the same session one after the other.
    /// The fallback is forced, which holds on every version (on 7.88.1 without it the download failed,
    /// "transfer closed with 16384 bytes remaining to read" in 3 runs of 3).
    @Test func aPausedDownloadGetsEveryByteWhileStreamedUploadsEnd() async throws {
        try await withStreamServerAndSession(.http2, configure: { $0.quirks.uploadEndDropsPausedStreamData = true }) {
            server, session in
            let total = 16 << 20
            let received = try await session.perform(
                TransportRequest(url: server.url("/bytes?n=\(total)&length=1&chunk=8192"))
            ) { head, body in
                #expect(head.status == .ok)
                #expect(head.httpVersion == .http2)
                let uploads = Task {
                    for round in 0..<40 {
                        let upload = TransportRequest.Body.stream { writer in
                            try await writer.write("round \(round)")
                            try await Task.sleep(for: .milliseconds(2))
                            try await writer.write(", ")
                            try await Task.sleep(for: .milliseconds(2))
                            try await writer.write("ended")
                        }
                        let response = try await session.execute(
                            TransportRequest(url: server.url("/request"), method: .post, body: upload))
                        let echo = try ReceivedRequest(response.body)
                        #expect(echo.protocol == "http/1.1")
                        #expect(echo.body == "round \(round), ended")
                    }
                }
                var received = 0
                for try await chunk in body {
                    received += chunk.count
                    try await Task.sleep(for: .microseconds(500))
                }
                try await uploads.value
                return received
            }
            #expect(received == total)
        }
    }
}
