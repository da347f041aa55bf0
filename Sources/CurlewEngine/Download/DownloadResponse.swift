// Curlew — what a finished download returns.

public import HTTPTypes

/// A finished download: the final response head and where its body now is.
///
/// The body of any status is written (a 404's error page too), as other HTTP clients do: check
/// ``status`` before using the file.
public struct DownloadResponse: Sendable {
    /// The final response head: 200, 206 for a resumed download, 416 for a resumed download whose file
    /// was already complete, or any other status.
    public let head: ResponseHead
    /// Where the file now is.
    public let filePath: String
    /// The file's size in bytes.
    public let fileSize: Int
    /// How many bytes came from the partial file of a resumed download; 0 when the body was written from
    /// its first byte.
    public let resumedFrom: Int

    /// The response status.
    public var status: HTTPResponse.Status { head.status }
}
