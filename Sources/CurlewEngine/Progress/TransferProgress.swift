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
    /// The part of the expected wire bytes, both ways, that has moved: from 0 to 1, never falling within
    /// one transfer (a redirect or a retry starts it again with the counts).
    ///
    /// While either direction's total is unknown (before the response head, or for a body of unknown
    /// length) it stays 0, and becomes 1 on completion.
    public var fractionCompleted = 0.0

    /// No bytes moved yet.
    public init() {}

    /// The fraction the counts give: 0 while a total is unknown, never above 1.
    var computedFraction: Double {
        guard let send = expectedBytesToSend, let receive = expectedBytesToReceive else { return 0 }
        let total = send + receive
        guard total > 0 else { return 0 }
        return min(1, Double(bytesSent + bytesReceived) / Double(total))
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
