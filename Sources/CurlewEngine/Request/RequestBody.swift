// Curlew — what a request sends as its body.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The body of a request.
///
/// Today a body is in memory and is handed to libcurl without copying. The type is a struct over a
/// private storage so that file-backed and streamed bodies can be added without breaking callers.
public struct RequestBody: Sendable, Hashable {
    enum Storage: Sendable, Hashable {
        case bytes(Data)
    }

    let storage: Storage

    /// A body made of these bytes.
    public static func data(_ data: Data) -> RequestBody { RequestBody(storage: .bytes(data)) }

    /// A body made of these bytes.
    public static func bytes(_ bytes: some Sequence<UInt8>) -> RequestBody { .data(Data(bytes)) }

    /// A body holding the UTF-8 bytes of `string`.
    public static func string(_ string: String) -> RequestBody { .data(Data(string.utf8)) }

    /// The number of bytes the body will send, when known before sending.
    public var knownLength: Int? {
        switch storage {
        case .bytes(let data): data.count
        }
    }

    /// Whether the body can be sent again (for a 307 or 308 redirect): bodies held in memory can.
    public var isReplayable: Bool {
        switch storage {
        case .bytes: true
        }
    }

    /// The bytes, when the body is held in memory.
    public var inMemoryBytes: Data? {
        switch storage {
        case .bytes(let data): data
        }
    }
}
