// Curlew — what stream_server.py's `/multipart` saw: the form as python-multipart's streaming parser read
// it (an independent parser: none of Curlew's code), part by part, with sizes and digests.

import Foundation

/// What `/multipart` answers (and logs under its key): the request's framing and the parsed form.
package struct MultipartReport: Decodable, Sendable {
    /// One part as the parser split it.
    package struct Part: Decodable, Sendable, Equatable {
        /// Each header line as `[field, value]` (the value without the spaces after the colon).
        package let headers: [[String]]
        /// The Content-Disposition's type (`form-data`).
        package let disposition: String
        /// The `name` parameter as python-multipart's `parse_options_header` reads it; nil when absent.
        package let name: String?
        /// The `filename` parameter, as read; nil when absent.
        package let filename: String?
        /// The part's Content-Type; nil when absent.
        package let contentType: String?
        package let size: Int
        package let crc32: UInt32
        package let sha256: String
        /// The part's bytes when at most 64 KiB.
        package let content: Data?

        enum CodingKeys: String, CodingKey {
            case headers, disposition, name, filename, size, crc32, sha256, content
            case contentType = "content_type"
        }
    }

    /// `done` for a body read to its end, `failed` for one that broke off.
    package let event: String
    package let method: String?
    /// The request target as sent (path and query).
    package let target: String?
    package let `protocol`: String?
    package let contentType: String?
    package let contentLength: Int?
    package let transferEncoding: String?
    /// Whether the HTTP/1.1 body came chunked.
    package let chunked: Bool?
    /// The boundary parsed from the request's Content-Type.
    package let boundary: String?
    /// The body bytes received.
    package let bodyLength: Int?
    package let bodySHA256: String?
    /// The whole body when at most 64 KiB.
    package let body: Data?
    /// The closing boundary was parsed and the body ended there.
    package let complete: Bool
    /// Why the body is not a complete form, when it is not.
    package let error: String?
    package let parts: [Part]
    /// For a `failed` event: the bytes received before the body broke off.
    package let received: Int?
    package let connection: Int?
    package let request: Int?

    enum CodingKeys: String, CodingKey {
        case event, method, target, `protocol`, chunked, boundary, body, complete, error, parts, received, connection, request
        case contentType = "content_type"
        case contentLength = "content_length"
        case transferEncoding = "transfer_encoding"
        case bodyLength = "body_length"
        case bodySHA256 = "body_sha256"
    }

    package init(_ data: Data) throws {
        self = try JSONDecoder().decode(MultipartReport.self, from: data)
    }
}

/// What `/inflate` answers for a body sent without a coding: its length and digests, computed by Python.
package struct BodyDigest: Decodable, Sendable, Equatable {
    package let method: String
    package let contentLength: Int?
    package let transferEncoding: String?
    package let wireLength: Int
    package let sha256: String
    package let crc32: UInt32

    enum CodingKeys: String, CodingKey {
        case method, sha256, crc32
        case contentLength = "content_length"
        case transferEncoding = "transfer_encoding"
        case wireLength = "wire_length"
    }

    package init(_ data: Data) throws {
        self = try JSONDecoder().decode(BodyDigest.self, from: data)
    }
}
