// Curlew — a request's header lines as one curl list in one allocation.

import CCurl
import HTTPTypes

#if canImport(Glibc)
import Glibc
#endif

/// Builds the `CURLOPT_HTTPHEADER` list of a request that has fields or a body.
///
/// The nodes and the text of every line sit in one `malloc` block, written in two passes (measure,
/// then copy): `curl_slist_append` would allocate a node and copy a string per line, and formatting
/// each line as a `String` first cost as much again. libcurl only reads the list; it lives until the
/// transfer leaves curl and is released with one `free` (see `TransferContext.releaseRequestResources`).
enum HeaderList {
    /// The session's default lines the request does not override, the request's fields, and the lines
    /// that go with a body; nil when there are none (or memory ran out: curl then sends its own).
    static func make(
        fields: HTTPFields, body: TransferContext.BodyLines, defaults: HandleDefaults
    ) -> UnsafeMutablePointer<curl_slist>? {
        // Pass 1: how many lines, how many bytes (each line NUL-terminated), which of the session's default
        // lines go (bit i set: `defaults.defaultHeaderLines[i]`, not overridden by the request; there are
        // two, User-Agent and Accept-Encoding), and what a body still needs.
        var count = 0
        var bytes = 0
        var hasContentType = false
        var hasExpect = false
        for field in fields {
            if field.name == .contentType { hasContentType = true }
            if field.name == .expect { hasExpect = true }
            count += 1
            bytes += lineLength(field) + 1
        }
        var kept: UInt64 = 0
        for (index, (name, line)) in defaults.defaultHeaderLines.enumerated() where fields[name] == nil {
            kept |= 1 << UInt64(index)
            count += 1
            bytes += line.utf8.count + 1
        }
        let tail = bodyLines(body, hasContentType: hasContentType, hasExpect: hasExpect, defaults: defaults)
        for line in tail {
            count += 1
            bytes += line.utf8CodeUnitCount + 1
        }
        guard count > 0 else { return nil }
        let nodeBytes = count * MemoryLayout<curl_slist>.stride
        guard let block = malloc(nodeBytes + bytes) else { return nil }

        // Pass 2: the nodes first, then the text they point into.
        let nodes = block.bindMemory(to: curl_slist.self, capacity: count)
        var writer = LineWriter(nodes: nodes, text: (block + nodeBytes).assumingMemoryBound(to: CChar.self))
        for (index, (_, line)) in defaults.defaultHeaderLines.enumerated() where kept & (1 << UInt64(index)) != 0 {
            writer.begin()
            writer.append(line)
            writer.end()
        }
        for field in fields {
            writer.begin()
            writer.append(field.name.rawName)
            // "Name:" would tell curl to remove its own header; "Name;" sends an empty value.
            if field.value.isEmpty {
                writer.append(";")
            } else {
                writer.append(": ")
                writer.append(field.value)
            }
            writer.end()
        }
        for line in tail {
            writer.begin()
            writer.append(line)
            writer.end()
        }
        nodes[count - 1].next = nil
        return nodes
    }

    /// The lines a body needs: curl adds its own form Content-Type to every POST body (a body without one
    /// goes without), and `Expect: 100-continue` to bodies over 1 MiB or of unknown length, then waits up
    /// to 1 s for servers that never answer it (sent only when configured).
    private static func bodyLines(
        _ body: TransferContext.BodyLines, hasContentType: Bool, hasExpect: Bool, defaults: HandleDefaults
    ) -> [StaticString] {
        guard body != .none else { return [] }
        var lines: [StaticString] = []
        if !hasContentType { lines.append("Content-Type:") }
        if !hasExpect {
            if let threshold = defaults.expectContinueThreshold, body.reaches(threshold) {
                lines.append("Expect: 100-continue")
            } else {
                lines.append("Expect:")
            }
        }
        return lines
    }

    private static func lineLength(_ field: HTTPField) -> Int {
        field.name.rawName.utf8.count + (field.value.isEmpty ? 1 : 2 + field.value.utf8.count)
    }

    /// Writes lines into the block: each node points at its line's first byte and at the next node.
    private struct LineWriter {
        let nodes: UnsafeMutablePointer<curl_slist>
        var text: UnsafeMutablePointer<CChar>
        var index = 0

        init(nodes: UnsafeMutablePointer<curl_slist>, text: UnsafeMutablePointer<CChar>) {
            self.nodes = nodes
            self.text = text
        }

        mutating func begin() {
            nodes[index].data = text
            nodes[index].next = nodes + index + 1
        }

        mutating func append(_ string: String) {
            var string = string
            string.withUTF8 { bytes in
                guard let base = bytes.baseAddress else { return }
                UnsafeMutableRawPointer(text).copyMemory(from: base, byteCount: bytes.count)
                text += bytes.count
            }
        }

        mutating func append(_ string: StaticString) {
            UnsafeMutableRawPointer(text).copyMemory(from: string.utf8Start, byteCount: string.utf8CodeUnitCount)
            text += string.utf8CodeUnitCount
        }

        mutating func end() {
            text.pointee = 0
            text += 1
            index += 1
        }
    }
}
