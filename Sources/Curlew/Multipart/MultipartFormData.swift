// Curlew — a multipart/form-data body: its parts and its boundary.

/// The parts of a `multipart/form-data` body (RFC 7578) and the boundary that separates them.
///
/// Curlew encodes the body itself: the bytes on the wire are exactly those of ``encoded(boundary:)``, so
/// stubs, logs and recorded traffic can show them. By default each request gets a random boundary; set
/// ``boundary`` for fixed bytes (tests, signatures).
///
/// Parts held in memory are checked not to contain the boundary; a file's or a stream's bytes cannot be
/// checked before they are sent, and a random boundary of 128 bits is what keeps them apart.
///
/// ```swift
/// case .upload(let photo):
///     return .uploadMultipart([
///         MultipartFormBodyPart(provider: .file(photo), name: "photo"),
///         MultipartFormBodyPart(provider: .data(Data("A sunset".utf8)), name: "caption"),
///     ])
/// ```
public struct MultipartFormData: Sendable, Hashable, ExpressibleByArrayLiteral {
    /// The parts, in the order they are sent.
    public var parts: [MultipartFormBodyPart]
    /// The boundary, or nil for a new random one (``randomBoundary()``) each time a request is built.
    ///
    /// A boundary is 1 to 70 characters from RFC 2046's set (letters, digits and `'()+_,-./:=?` and
    /// space, not last).
    public var boundary: String?

    /// A form of these parts.
    ///
    /// - Parameters:
    ///   - parts: The parts, in the order they are sent.
    ///   - boundary: A fixed boundary, or nil for a random one per request.
    public init(parts: [MultipartFormBodyPart], boundary: String? = nil) {
        self.parts = parts
        self.boundary = boundary
    }

    /// A form of these parts, with a random boundary per request.
    public init(arrayLiteral parts: MultipartFormBodyPart...) {
        self.init(parts: parts)
    }

    /// Whether the form has no parts (such a form cannot be sent).
    public var isEmpty: Bool { parts.isEmpty }

    /// A new random boundary: `curlew-` and 32 hexadecimal digits (128 random bits).
    public static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = String(generator.next() as UInt64, radix: 16)
        let low = String(generator.next() as UInt64, radix: 16)
        return "curlew-" + String(repeating: "0", count: 16 - high.count) + high
            + String(repeating: "0", count: 16 - low.count) + low
    }

    /// The body with `boundary`, and the `Content-Type` value that names it
    /// (`multipart/form-data; boundary=…`, quoted when the boundary needs it).
    ///
    /// A form of parts in memory only is one block of bytes; one with file parts is read while the
    /// request is sent, the files straight into libcurl's buffer as a file body is; one with a stream part
    /// is a stream. All are of known length (sent with `Content-Length`) and replayable unless a stream
    /// part is not. Files are checked (readable regular files) and measured now.
    ///
    /// - Throws: ``MultipartEncodingError``.
    public func encoded(boundary: String) throws(MultipartEncodingError) -> (body: TransportRequest.Body, contentType: String) {
        try MultipartEncoder(form: self, boundary: boundary).encode()
    }
}
