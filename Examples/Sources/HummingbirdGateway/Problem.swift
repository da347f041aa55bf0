// JSON bodies of this service's answers.

import Foundation
import Hummingbird

/// The body of every error this service answers with: RFC 9457 problem details.
struct Problem: Encodable, Sendable {
    /// The HTTP status code of the answer.
    var status: Int
    /// The status's reason phrase, e.g. `Bad Gateway`.
    var title: String
    /// What happened, for people.
    var detail: String
    /// The upstream's status code, when the upstream answered.
    var upstreamStatus: Int?

    enum CodingKeys: String, CodingKey {
        case status, title, detail
        case upstreamStatus = "upstream_status"
    }
}

extension HTTPResponse.Status {
    /// 499, nginx's code for a client that closed the connection before the answer: never seen by the
    /// client, but it tells the access log what happened.
    static let clientClosedRequest = HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request")
}

extension Response {
    /// A JSON answer.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        try encoded(value, status: status, contentType: "application/json")
    }

    /// A problem-details answer with `status`.
    static func problem(_ status: HTTPResponse.Status, detail: String, upstreamStatus: Int? = nil) throws -> Response {
        let problem = Problem(status: status.code, title: status.reasonPhrase, detail: detail, upstreamStatus: upstreamStatus)
        return try encoded(problem, status: status, contentType: "application/problem+json")
    }

    private static func encoded(_ value: some Encodable, status: HTTPResponse.Status, contentType: String) throws
        -> Response
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        return Response(
            status: status, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
