// Curlew — what stream_server.py's /speak-report tells of a tagged /speak: how much of the request body the
// server read, and whether the body ended whole.

import CurlewEngine
import Foundation
import HTTPTypes

/// What `/speak-report?tag=T` answers for the `/speak?tag=T` exchange.
package struct SpeakReport: Decodable, Sendable {
    /// `http/1.1` or `h2`.
    package let `protocol`: String
    /// The connection the `/speak` came on (from 1, in accept order: `/request` numbers them the same way).
    package let connection: Int
    /// The `/speak`'s number on its connection (from 1).
    package let request: Int
    /// The `A`s the server wrote.
    package let spoken: Int
    /// The request body bytes the server read.
    package let bodyBytes: Int
    /// Whether the server has stopped reading the request body: it ended, or broke off.
    package let ended: Bool
    /// Whether the request body ended whole: over HTTP/1.1 the chunked body's last chunk and the empty line
    /// after it were read; over HTTP/2 the request's END_STREAM arrived.
    package let complete: Bool

    enum CodingKeys: String, CodingKey {
        case `protocol`, connection, request, spoken, ended, complete
        case bodyBytes = "body_bytes"
    }
}

extension StreamTestServer {
    /// Asks `/speak-report` over `session` every 20 ms, for up to `seconds`, until the server has stopped
    /// reading the request body of the `/speak` tagged `tag`; returns the last report (nil when there was
    /// none: the `/speak` never reached the route).
    package func speakReport(tag: String, over session: CurlSession, within seconds: Double = 20) async throws -> SpeakReport? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var last: SpeakReport?
        while true {
            let response = try await session.execute(TransportRequest(url: url("/speak-report?tag=\(tag)")))
            switch response.status.code {
            case 200: last = try JSONDecoder().decode(SpeakReport.self, from: response.body)
            case 404: last = nil
            default:
                let answer = "/speak-report answered \(response.status.code): \(response.body.text)"
                throw TestInfrastructureError(description: "\(answer); stderr:\n\(standardError)")
            }
            if last?.ended == true || ContinuousClock.now >= deadline { return last }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
