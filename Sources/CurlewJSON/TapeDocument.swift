// Curlew — one parsed document: its bytes, its tape and the coding-path arena of one decode.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JSON document parsed into a tape, with the state one decode of it needs.
///
/// A document belongs to a single `decode` call and is only used on that call's thread (the decoder,
/// containers and super-decoders that reference it are not `Sendable`), so its mutable state — key
/// lookup cursors on the tape, the path arena, caches — needs no lock. The document owns a private
/// copy of the input, so decoders or containers that escape a decode stay memory-safe.
final class TapeDocument {
    /// The input bytes followed by ``JSONTapeParser/padding`` zero bytes.
    let bytes: UnsafeMutablePointer<UInt8>
    /// The tape; the last entry is a `null` that stands for absent values (see ``nullIndex``).
    let tape: UnsafeMutablePointer<TapeEntry>
    /// The number of tape entries, including the trailing `null`.
    let tapeCount: Int
    /// The settings being reproduced.
    let options: JSONDecodingOptions
    /// The coding-path arena (node 0 is the root). Only appended to and read by
    /// ``path(_:appending:)`` and ``codingPath(_:appending:)``, whose accesses never overlap, so it
    /// skips the dynamic exclusivity check.
    @exclusivity(unchecked) var paths: ContiguousArray<PathNode> = [PathNode(parent: 0, component: nil)]
    /// With `convertFromSnakeCase`, the converted form of each key the conversion changes, by the
    /// key's tape index: its offset in ``keyAliasBytes`` shifted left by 32, plus its length (0:
    /// none). Allocated on first use; only read and written by the key lookup code, never in
    /// overlapping accesses, hence no dynamic exclusivity checks.
    @exclusivity(unchecked) var keyAliases: UnsafeMutablePointer<UInt64>?
    /// The bytes of converted keys, followed by at least eight zero bytes.
    @exclusivity(unchecked) var keyAliasBytes: UnsafeMutablePointer<UInt8>?
    /// How many bytes of ``keyAliasBytes`` hold converted keys.
    @exclusivity(unchecked) var keyAliasByteCount = 0
    /// How many bytes ``keyAliasBytes`` has room for.
    @exclusivity(unchecked) var keyAliasByteCapacity = 0
    private var cachedUserInfo: [CodingUserInfoKey: Any]?
    /// The types decoded so far with their `DecodableArray` conformance. Only read and appended to by
    /// ``arrayConformance(of:)``, never in overlapping accesses.
    @exclusivity(unchecked) var arrayConformances: [ArrayConformance] = []

    /// Parses `data`, or returns nil when it is not strict RFC 8259 JSON (see ``JSONTapeParser``);
    /// with `allowsTrailingCommas`, a comma before a closing bracket is accepted too.
    init?(parsing data: Data, options: JSONDecodingOptions, allowsTrailingCommas: Bool = false) {
        let count = data.count
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: count + JSONTapeParser.padding)
        data.copyBytes(to: bytes, count: count)
        (bytes + count).initialize(repeating: 0, count: JSONTapeParser.padding)
        // About one value per six bytes in typical API payloads; the builder grows if needed.
        var builder = TapeBuilder(capacity: count / 6 + 16)
        guard JSONTapeParser.parse(bytes, count: count, allowsTrailingCommas: allowsTrailingCommas, into: &builder)
        else {
            builder.deallocate()
            bytes.deallocate()
            return nil
        }
        let nullIndex = builder.count
        builder.append(TapeEntry(kind: .null, flags: 0, offset: 0, length: 0, next: UInt32(nullIndex + 1)))
        self.bytes = bytes
        self.tape = builder.entries
        self.tapeCount = builder.count
        self.options = options
        // One path node per nested value decoded is typical; avoid regrowing the arena early on.
        paths.reserveCapacity(min(builder.count, 1024))
    }

    deinit {
        bytes.deallocate()
        tape.deallocate()
        keyAliases?.deallocate()
        keyAliasBytes?.deallocate()
    }

    /// The tape index of the `null` used for absent values (a missing `super` key).
    var nullIndex: UInt32 { UInt32(tapeCount - 1) }

    /// The entry at `index` (an index taken from the tape itself, so always in bounds).
    @inline(__always)
    subscript(index: UInt32) -> TapeEntry {
        _read {
            assert(Int(index) < tapeCount)
            yield tape[Int(index)]
        }
    }

    /// The raw bytes of a string's content or a number.
    @inline(__always)
    func rawBytes(of entry: TapeEntry) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: bytes + Int(entry.offset), count: Int(entry.length))
    }

    /// The user info handed to `Decodable` types (converted once, on first use).
    var userInfo: [CodingUserInfoKey: Any] {
        if let cachedUserInfo { return cachedUserInfo }
        var converted: [CodingUserInfoKey: Any] = [:]
        converted.reserveCapacity(options.userInfo.count)
        for (key, value) in options.userInfo { converted[key] = value }
        cachedUserInfo = converted
        return converted
    }
}
