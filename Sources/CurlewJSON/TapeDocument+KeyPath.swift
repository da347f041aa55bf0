// Curlew — the value at a dotted key path on the tape, and the bytes that value was parsed from.

extension TapeDocument {
    /// The tape index of the value at a dotted key path such as `"data.users.0.name"`, or nil when a
    /// step does not exist.
    ///
    /// The steps are those of `JSONValue.value(atKeyPath:)`: in an object, the first member whose key
    /// equals the step as Swift strings compare; in an array, the element at the step's `Int` value.
    /// An empty key path is the whole document.
    func value(atKeyPath keyPath: String) -> UInt32? {
        var current: UInt32 = 0
        guard !keyPath.isEmpty else { return current }
        for step in keyPath.split(separator: ".", omittingEmptySubsequences: false) {
            let entry = self[current]
            switch entry.kind {
            case .object:
                guard let member = firstMember(of: current, named: step) else { return nil }
                current = member
            case .array:
                guard let position = Int(step), position >= 0, position < Int(entry.length) else { return nil }
                var element = current + 1
                for _ in 0..<position { element = self[element].next }
                current = element
            default:
                return nil
            }
        }
        return current
    }

    /// The value of the first member of the object at `object` whose key equals `name`.
    private func firstMember(of object: UInt32, named name: Substring) -> UInt32? {
        let nameIsASCII = name.utf8.allSatisfy { $0 < 0x80 }
        let end = self[object].next
        var key = object + 1
        while key < end {
            let entry = self[key]
            // Escape-free ASCII against ASCII: equal bytes are equal strings. Otherwise the strings
            // compare, so canonically equivalent spellings match, as in a `[String: JSONValue]`.
            let matches =
                nameIsASCII && entry.flags == 0
                ? rawBytes(of: entry).elementsEqual(name.utf8) : keyString(at: key) == name
            if matches { return key + 1 }
            key = self[key + 1].next
        }
        return nil
    }

    /// The byte offsets of the value at `index` in the document, from its first byte to just past its
    /// last (a string's quotes and a container's brackets included).
    func byteRange(of index: UInt32) -> Range<Int> {
        byteStart(of: index)..<byteEnd(of: index)
    }

    private func byteStart(of index: UInt32) -> Int {
        let entry = self[index]
        switch entry.kind {
        case .string:
            return Int(entry.offset) - 1
        case .object where entry.next > index + 1:
            // The offset field holds the lookup cursor; only whitespace separates the brace from the
            // first key's opening quote.
            var position = Int(self[index + 1].offset) - 2
            while bytes[position] != UInt8(ascii: "{") { position -= 1 }
            return position
        default:
            return Int(entry.offset)
        }
    }

    private func byteEnd(of index: UInt32) -> Int {
        let entry = self[index]
        switch entry.kind {
        case .string:
            return Int(entry.offset) + Int(entry.length) + 1
        case .number, .true, .false, .null:
            return Int(entry.offset) + Int(entry.length)
        case .array, .object:
            var position: Int
            if entry.next == index + 1 {
                position = byteStart(of: index) + 1
            } else {
                var last = index + 1
                while self[last].next < entry.next { last = self[last].next }
                position = byteEnd(of: last)
            }
            // Only whitespace (and a tolerated trailing comma) comes before the closing bracket.
            while bytes[position] != UInt8(ascii: "]"), bytes[position] != UInt8(ascii: "}") { position += 1 }
            return position + 1
        }
    }
}
