// Curlew — why a multipart body could not be built or sent.

/// Why a multipart body could not be built. (What goes wrong while it is sent — a stream part that writes
/// more or fewer bytes than it declared, a file that changed — is a transport failure, as for any body.)
public enum MultipartEncodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The form has no parts; RFC 2046 requires at least one.
    case noParts
    /// The request's method does not carry a form (see `HTTPRequest.Method.supportsMultipart`).
    case methodNotSupported(String)
    /// The boundary is not 1 to 70 characters of RFC 2046's set, or ends with a space.
    case invalidBoundary(String)
    /// The part named so holds the boundary in its bytes.
    case boundaryInPart(name: String)
    /// The part named so has an empty MIME type (or one of spaces only) or one with control characters.
    case invalidMimeType(name: String, String)
    /// A file part's file cannot be read.
    case unreadableFile(path: String, reason: String)
    /// A file part's URL is not a file URL.
    case notAFileURL(String)
    /// A stream part declares a negative length, or one too large to send (`Int.max` as "unknown").
    case invalidLength(name: String, Int)

    public var description: String {
        switch self {
        case .noParts: "the multipart form has no parts"
        case .methodNotSupported(let method): "\(method) requests cannot carry a multipart form"
        case .invalidBoundary(let boundary): "the multipart boundary \"\(boundary)\" is not 1 to 70 characters of RFC 2046's set"
        case .boundaryInPart(let name): "the part \"\(name)\" contains the multipart boundary"
        case .invalidMimeType(let name, let type): "the part \"\(name)\" has an invalid MIME type \"\(type)\""
        case .unreadableFile(let path, let reason): "cannot read the file \(path): \(reason)"
        case .notAFileURL(let url): "\(url) is not a file URL"
        case .invalidLength(let name, let length): "the stream part \"\(name)\" declares a length of \(length) bytes"
        }
    }
}
