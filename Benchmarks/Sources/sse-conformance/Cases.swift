// The parsing table's format (Tests/Fixtures/event-stream-cases.json) and the ways each case is fed.
import Foundation

/// One expected dispatched event.
struct ExpectedEvent: Codable, Hashable, Sendable {
    var type: String
    var data: String
    var id: String
}

/// One row of the table.
struct ConformanceCase: Decodable, Sendable {
    var name: String
    var rule: String
    var input: String?
    var inputBase64: String?
    var events: [ExpectedEvent]
    /// The stream's last event ID after the input ends ("" when none).
    var lastEventID: String?
    /// The reconnection time after the input ends, in ms (nil: no valid `retry` seen).
    var retryMs: Int64?

    func bytes() throws -> [UInt8] {
        if let input { return Array(input.utf8) }
        if let inputBase64 {
            guard let data = Data(base64Encoded: inputBase64) else { throw ToolError("case \(name): bad inputBase64") }
            return [UInt8](data)
        }
        throw ToolError("case \(name): neither input nor inputBase64")
    }
}

struct ToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// How a case's bytes reach a decoder.
enum Feed: Sendable, CustomStringConvertible {
    case whole
    /// Two chunks: `[0, at)` and `[at, count)`.
    case split(at: Int)
    /// One chunk per byte.
    case bytewise

    /// Every feed for an input of `count` bytes: whole, split at every inner byte boundary, one byte at a time.
    static func all(count: Int) -> [Feed] {
        [.whole] + (count > 1 ? (1..<count).map { .split(at: $0) } + [.bytewise] : [])
    }

    /// The chunks, as slices of `bytes` (so their indices do not start at 0, as a transport's would not).
    func chunks(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        switch self {
        case .whole: return [bytes[...]]
        case .split(let at): return [bytes[..<at], bytes[at...]]
        case .bytewise: return bytes.indices.map { bytes[$0..<($0 + 1)] }
        }
    }

    var description: String {
        switch self {
        case .whole: return "whole"
        case .split(let at): return "split at byte \(at)"
        case .bytewise: return "one byte per chunk"
        }
    }
}

/// A sequence of byte chunks, the shape a transport delivers (`AsyncSequence<ArraySlice<UInt8>>`).
struct ChunkSequence: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let chunks: [ArraySlice<UInt8>]

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: ArraySlice<ArraySlice<UInt8>>
        mutating func next() async -> ArraySlice<UInt8>? { remaining.popFirst() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(remaining: chunks[...]) }
}
