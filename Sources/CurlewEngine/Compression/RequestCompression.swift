// Curlew — how a request body is compressed before it is sent.

/// A `Content-Encoding` for request bodies, compressed by Curlew with zlib on the calling task's side.
///
/// Set it on a request's ``TransferOptions/requestCompression`` (a target reaches it through its
/// `transferOptions`). The engine then sends the body compressed with `Content-Encoding` set:
///
/// - Bytes in memory are compressed up front and sent with `Content-Length` (the compressed size).
/// - Files and streams are compressed while they are sent, in constant memory; their compressed length
///   is not known up front, so they go without `Content-Length` (chunked over HTTP/1.1).
/// - A body that can be sent again (after a 307 or 308 redirect, or a retry on a fresh connection) is
///   compressed again from its first byte.
///
/// A request that sets its own `Content-Encoding` is sent as it is (its body is taken to be encoded
/// already), and a request without a body is unchanged. Compression is off unless set.
public struct RequestCompression: Sendable, Hashable, CustomStringConvertible {
    /// The content coding.
    public enum Coding: String, Sendable, Hashable {
        /// `gzip` (RFC 1952).
        case gzip
        /// `deflate`: the zlib format (RFC 1950) around deflate data, as RFC 9110 §8.4.1.2 defines it.
        case deflate
    }

    /// The content coding sent as `Content-Encoding`.
    public let coding: Coding
    /// zlib's compression level: 0 (stored, no compression) to 9 (smallest); 1 is the fastest that compresses.
    public let level: Int

    /// A coding at a level, clamped to 0...9.
    public init(_ coding: Coding, level: Int = 6) {
        self.coding = coding
        self.level = min(max(level, 0), 9)
    }

    /// `gzip` at `level` (0...9; 6 is zlib's default balance of speed and size).
    public static func gzip(level: Int = 6) -> RequestCompression { RequestCompression(.gzip, level: level) }

    /// `deflate` (the zlib format) at `level` (0...9).
    public static func deflate(level: Int = 6) -> RequestCompression { RequestCompression(.deflate, level: level) }

    /// `gzip, level 6`.
    public var description: String { "\(coding.rawValue), level \(level)" }
}
