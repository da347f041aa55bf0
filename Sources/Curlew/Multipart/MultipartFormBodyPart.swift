// Curlew — one part of a multipart/form-data body: a field or a file, with its name.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One part of a multipart form: where its bytes come from, its field name and, for files, a file name
/// and a MIME type (Moya's `MultipartFormBodyPart`).
///
/// ```swift
/// let avatar = MultipartFormBodyPart(
///     provider: .file(URL(fileURLWithPath: "/srv/uploads/avatar.png")), name: "avatar")
/// let caption = MultipartFormBodyPart(provider: .data(Data("Holiday".utf8)), name: "caption")
/// ```
public struct MultipartFormBodyPart: Sendable, Hashable {
    /// Where a part's bytes come from.
    public enum FormDataProvider: Sendable, Hashable {
        /// These bytes.
        case data(Data)
        /// The file at this file URL, read while the request is sent; its length is taken when the
        /// request is built.
        case file(URL)
        /// Bytes written while the request is sent by an async producer, of a length known up front
        /// (Moya's `InputStream` with its length).
        case stream(FormDataStream)
    }

    /// Where the bytes come from.
    public var provider: FormDataProvider
    /// The form field's name (`Content-Disposition: form-data; name="…"`).
    public var name: String
    /// The file name sent with the part (`filename="…"`); for a ``FormDataProvider/file(_:)`` part,
    /// nil sends the file's own name.
    public var fileName: String?
    /// The part's `Content-Type`; for a ``FormDataProvider/file(_:)`` part, nil sends a type chosen from
    /// the file name's extension (`application/octet-stream` when unknown). Other parts without one send
    /// no `Content-Type` (a plain field).
    public var mimeType: String?

    /// Creates a part.
    ///
    /// - Parameters:
    ///   - provider: Where the bytes come from.
    ///   - name: The form field's name.
    ///   - fileName: The file name to send, if any.
    ///   - mimeType: The part's `Content-Type`, if any.
    public init(provider: FormDataProvider, name: String, fileName: String? = nil, mimeType: String? = nil) {
        self.provider = provider
        self.name = name
        self.fileName = fileName
        self.mimeType = mimeType
    }
}

/// The bytes of a multipart part written while the request is sent, by an async producer, with their
/// length known up front.
///
/// Two streams are equal only when they are the same stream (made by the same call to
/// ``init(length:replayable:_:)``), as Moya compares input streams.
public struct FormDataStream: Sendable, Hashable {
    /// A reference whose identity is the stream's.
    private final class Identity: Sendable {}

    private let identity = Identity()
    /// The exact number of bytes the producer writes.
    public let length: Int
    /// Whether calling the producer again writes the same bytes, so the body can be sent again (after a
    /// 307 or 308 redirect, a retry).
    public let isReplayable: Bool
    let produce: @Sendable (RequestBodyWriter) async throws -> Void

    /// A stream of `length` bytes written by `produce`.
    ///
    /// Writing more or fewer than `length` bytes fails the request with
    /// ``/CurlewEngine/TransportError/Code/bodyLengthMismatch`` (``CurlewError/transport(_:)``); the
    /// server never gets a complete body. A negative length fails the request when it is built.
    ///
    /// - Parameters:
    ///   - length: The number of bytes.
    ///   - replayable: Whether `produce` can be called again and writes the same bytes.
    ///   - produce: Writes the bytes; runs on the calling task's side, never on the event loop.
    public init(length: Int, replayable: Bool = false, _ produce: @escaping @Sendable (RequestBodyWriter) async throws -> Void) {
        self.length = length
        isReplayable = replayable
        self.produce = produce
    }

    public static func == (lhs: FormDataStream, rhs: FormDataStream) -> Bool { lhs.identity === rhs.identity }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(identity)) }
}
