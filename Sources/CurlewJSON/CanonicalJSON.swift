// Curlew — one spelling per JSON document, so bodies that differ only in key order or spacing compare equal.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Canonical JSON: a document written one way, whatever the order of its object members and its
/// insignificant whitespace.
package enum CanonicalJSON {
    /// `data` with the members of every object sorted by their unescaped keys (members with equal keys
    /// in document order) and without insignificant whitespace; strings and numbers are written as they
    /// are in `data`. Nil when `data` is not strict RFC 8259 JSON.
    package static func canonical(_ data: Data) -> Data? {
        guard let document = TapeDocument(parsing: data, options: .plain) else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(data.count)
        write(document, 0, to: &output)
        return Data(output)
    }

    /// Appends the value at tape index `index` (its depth is bounded by the parser's nesting limit).
    private static func write(_ document: TapeDocument, _ index: UInt32, to output: inout [UInt8]) {
        let entry = document[index]
        switch entry.kind {
        case .string:
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: document.rawBytes(of: entry))
            output.append(UInt8(ascii: "\""))
        case .number, .true, .false, .null:
            output.append(contentsOf: document.rawBytes(of: entry))
        case .array:
            output.append(UInt8(ascii: "["))
            var element = index + 1
            while element < entry.next {
                if element > index + 1 { output.append(UInt8(ascii: ",")) }
                write(document, element, to: &output)
                element = document[element].next
            }
            output.append(UInt8(ascii: "]"))
        case .object:
            var members: [(name: String, key: UInt32)] = []
            members.reserveCapacity(Int(entry.length))
            var key = index + 1
            while key < entry.next {
                members.append((document.keyString(at: key), key))
                key = document[key + 1].next
            }
            // By the keys' UTF-8, then by position: a total order, so duplicate keys keep theirs.
            members.sort { left, right in
                left.name.utf8.elementsEqual(right.name.utf8)
                    ? left.key < right.key : left.name.utf8.lexicographicallyPrecedes(right.name.utf8)
            }
            output.append(UInt8(ascii: "{"))
            for (position, member) in members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                write(document, member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                write(document, member.key + 1, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }
}
