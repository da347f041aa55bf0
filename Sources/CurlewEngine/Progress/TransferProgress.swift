// Curlew — how far a transfer has come, both ways.

/// How far a request has come: bytes sent and received, against what is expected.
///
/// Bytes are counted as bodies travel: a response body as it arrived, before its `Content-Encoding` is
/// undone, and a request body as sent (compressed, when the request asks for ``RequestCompression``);
/// HTTP/1.1 chunk framing is not counted. What the response body decodes to is counted apart, in
/// ``decodedBytesReceived``. A redirect, or a retry on a fresh attempt, starts the counts again.
public struct TransferProgress: Sendable, Hashable, CustomStringConvertible {
    /// Request body bytes sent so far.
    public var bytesSent = 0
    /// The request body's length: 0 without a body; nil when not known up front (a stream without a
    /// length, a compressed file or stream).
    public var expectedBytesToSend: Int?
    /// Response body bytes received so far, as they came over the wire (encoded, without chunk framing).
    public var bytesReceived = 0
    /// The response body's length as the final head announced it (`Content-Length`, the encoded size
    /// under a `Content-Encoding`); 0 for a HEAD request and for 204 and 304 responses; nil until the
    /// head arrives and when the response has none.
    public var expectedBytesToReceive: Int?
    /// Response body bytes after decoding: what the caller is handed, or what a download's file holds.
    public var decodedBytesReceived = 0
    /// Whether the exchange is complete (the last update, which carries the response).
    public var isCompleted = false
    /// The part of the body being transferred that has moved, from 0 to 1, never falling within one
    /// transfer (a redirect or a retry starts it again with the counts); 1 on completion.
    ///
    /// It follows one body, as Moya and URLSession's tasks count it: the request body for an upload, the
    /// response body otherwise. A ``CurlSession`` call counts the request body when it has a known length
    /// above zero and the response body otherwise; a provider call counts the request body for Moya's
    /// upload tasks only. It stays 0 while that body's length is unknown (before the response head, or a
    /// body without a length).
    public var fractionCompleted = 0.0

    /// No bytes moved yet.
    public init() {}

    /// The fraction the counts give for the body `basis` names: 0 while its length is unknown, never above 1.
    func computedFraction(_ basis: ProgressBasis) -> Double {
        let followsRequest: Bool
        switch basis {
        case .requestBody: followsRequest = true
        case .responseBody: followsRequest = false
        case .automatic: followsRequest = (expectedBytesToSend ?? 0) > 0
        }
        let done = followsRequest ? bytesSent : bytesReceived
        guard let total = followsRequest ? expectedBytesToSend : expectedBytesToReceive, total > 0 else { return 0 }
        return min(1, Double(done) / Double(total))
    }

    /// `sent 1024/4096, received 0/?, decoded 0, 25%`.
    public var description: String {
        let sendTotal = expectedBytesToSend.map(String.init) ?? "?"
        let receiveTotal = expectedBytesToReceive.map(String.init) ?? "?"
        let percent = Int((fractionCompleted * 100).rounded(.down))
        return "sent \(bytesSent)/\(sendTotal), received \(bytesReceived)/\(receiveTotal), decoded \(decodedBytesReceived), "
            + (isCompleted ? "completed" : "\(percent)%")
    }
}

/// One element of a progress sequence: the progress, and with the last one the response.
public struct ProgressUpdate<Response: Sendable>: Sendable {
    /// How far the transfer has come.
    public let progress: TransferProgress
    /// The response, in the last element only (``TransferProgress/isCompleted``).
    public let response: Response?

    /// An update.
    public init(progress: TransferProgress, response: Response?) {
        self.progress = progress
        self.response = response
    }
}

/// Which body a progress sequence's ``TransferProgress/fractionCompleted`` follows.
package enum ProgressBasis: Sendable {
    /// The request body when it has a known length above zero, the response body otherwise.
    case automatic
    /// The request body (an upload).
    case requestBody
    /// The response body.
    case responseBody
}
