// Curlew — finding an object's member by key without building a dictionary per object.

/// How an object's members are found, decided the first time a keyed container reads the object.
enum KeyLookupMode: UInt8 {
    /// Not decided yet.
    case undecided = 0
    /// Compare the requested key's UTF-8 with the key bytes: every key is escape-free ASCII, keys are
    /// unique, and the key strategy leaves them unchanged or (snake case) converts them in ASCII.
    case rawBytes = 1
    /// Build a `[String: value]` table per container, exactly as JSONDecoder does (escaped or
    /// non-ASCII keys, duplicate keys, keys with other characters the snake-case strategy converts,
    /// custom strategies).
    case table = 2
}

extension TapeDocument {
    /// The lookup mode of the object at `object`, deciding it on first use.
    @inline(__always)
    func lookupMode(of object: UInt32) -> KeyLookupMode {
        let decided = self[object].lookupMode
        if decided != KeyLookupMode.undecided.rawValue { return KeyLookupMode(rawValue: decided) ?? .table }
        let mode = decideLookupMode(of: object)
        tape[Int(object)].lookupMode = mode.rawValue
        return mode
    }

    private func decideLookupMode(of object: UInt32) -> KeyLookupMode {
        if case .custom = options.keyStrategy { return .table }
        let snakeCase: Bool = if case .convertFromSnakeCase = options.keyStrategy { true } else { false }
        let end = self[object].next
        var key = object + 1
        while key < end {
            let entry = self[key]
            if entry.flags & (TapeEntry.escaped | TapeEntry.nonASCII) != 0 { return .table }
            if snakeCase, !SnakeCaseKeys.isIdentity(rawBytes(of: entry)), !storeConvertedKey(at: key) { return .table }
            key = self[key + 1].next
        }
        return keysAreDistinct(in: object) ? .rawBytes : .table
    }

    /// Records the snake-case conversion of the ASCII key at tape index `key` as its lookup bytes;
    /// false when its conversion is left to Foundation (see ``SnakeCaseKeys/convertASCII(_:into:)``).
    private func storeConvertedKey(at key: UInt32) -> Bool {
        let raw = rawBytes(of: self[key])
        // Room for the converted key plus the zero bytes that make 8-byte prefix loads safe.
        if keyAliasByteCount + raw.count + 8 > keyAliasByteCapacity {
            let capacity = max(256, (keyAliasByteCount + raw.count + 8) * 2)
            let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            larger.initialize(repeating: 0, count: capacity)
            if let old = keyAliasBytes {
                larger.update(from: old, count: keyAliasByteCount)
                old.deallocate()
            }
            keyAliasBytes = larger
            keyAliasByteCapacity = capacity
        }
        guard let aliasBytes = keyAliasBytes,
            let length = SnakeCaseKeys.convertASCII(raw, into: aliasBytes + keyAliasByteCount)
        else { return false }
        let aliases: UnsafeMutablePointer<UInt64>
        if let existing = keyAliases {
            aliases = existing
        } else {
            aliases = .allocate(capacity: tapeCount)
            aliases.initialize(repeating: 0, count: tapeCount)
            keyAliases = aliases
        }
        aliases[Int(key)] = UInt64(keyAliasByteCount) << 32 | UInt64(length)
        keyAliasByteCount += length
        return true
    }

    /// The bytes a key is looked up by: its raw bytes, or its snake-case conversion. At least eight
    /// bytes from the start are readable.
    @inline(__always)
    func lookupKeyBytes(at key: UInt32) -> UnsafeBufferPointer<UInt8> {
        if let keyAliases, let keyAliasBytes {
            let alias = keyAliases[Int(key)]
            if alias != 0 {
                return UnsafeBufferPointer(start: keyAliasBytes + Int(alias >> 32), count: Int(alias & 0xFFFF_FFFF))
            }
        }
        return rawBytes(of: self[key])
    }

    /// Whether no two keys of the object have the same lookup bytes (JSONDecoder keeps the first of
    /// duplicates; the raw-bytes lookup may only be used when there are none).
    private func keysAreDistinct(in object: UInt32) -> Bool {
        let count = Int(self[object].length)
        guard count > 1 else { return true }
        let end = self[object].next
        if count > 16 {
            var seen = Set<String>(minimumCapacity: count)
            var key = object + 1
            while key < end {
                guard seen.insert(String(decoding: lookupKeyBytes(at: key), as: UTF8.self)).inserted else {
                    return false
                }
                key = self[key + 1].next
            }
            return true
        }
        // Small objects: compare each pair by length and first eight bytes, then in full.
        return withUnsafeTemporaryAllocation(of: (key: UInt32, prefix: UInt64).self, capacity: count) { keys in
            var filled = 0
            var key = object + 1
            while key < end {
                let bytes = lookupKeyBytes(at: key)
                let prefix = Self.prefix(of: bytes)
                for earlier in 0..<filled where keys[earlier].prefix == prefix {
                    let other = lookupKeyBytes(at: keys[earlier].key)
                    if other.count == bytes.count, other.elementsEqual(bytes) { return false }
                }
                keys[filled] = (key, prefix)
                filled += 1
                key = self[key + 1].next
            }
            return true
        }
    }

    /// The first eight bytes of a key (zero-filled); its storage keeps eight bytes readable.
    @inline(__always)
    private static func prefix(of key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        guard let start = key.baseAddress else { return 0 }
        let word = UInt64(littleEndian: UnsafeRawPointer(start).loadUnaligned(as: UInt64.self))
        return key.count >= 8 ? word : word & ((1 << (UInt64(key.count) << 3)) &- 1)
    }

    /// The value of the member named `name` in an object in ``KeyLookupMode/rawBytes`` mode, or nil.
    ///
    /// The scan starts where the previous lookup in this object matched, so members decoded in
    /// document order are found at the first comparison.
    @inline(__always)
    func member(of object: UInt32, named name: String) -> UInt32? {
        var name = name
        let found = name.withUTF8 { member(of: object, utf8: $0) }
        if found == nil, !name.utf8.allSatisfy({ $0 < 0x80 }) {
            // Every key here is ASCII, but a non-ASCII name can still equal one under Unicode
            // canonical equivalence (String ==), which JSONDecoder's dictionary honours.
            return memberByStringComparison(of: object, named: name)
        }
        return found
    }

    @inline(__always)
    private func member(of object: UInt32, utf8 wanted: UnsafeBufferPointer<UInt8>) -> UInt32? {
        let first = object + 1
        let end = self[object].next
        guard first < end, let wantedBase = wanted.baseAddress else { return nil }
        var wantedPrefix: UInt64 = 0
        for index in 0..<min(8, wanted.count) { wantedPrefix |= UInt64(wantedBase[index]) << (UInt64(index) << 3) }
        let start = self[object].offset
        var key = start
        repeat {
            let candidate = lookupKeyBytes(at: key)
            let value = key + 1
            var next = self[value].next
            if next == end { next = first }
            if candidate.count == wanted.count, Self.prefix(of: candidate) == wantedPrefix,
                wanted.count <= 8 || candidate.elementsEqual(wanted)
            {
                tape[Int(object)].offset = next
                return value
            }
            key = next
        } while key != start
        return nil
    }

    private func memberByStringComparison(of object: UInt32, named name: String) -> UInt32? {
        let end = self[object].next
        var key = object + 1
        while key < end {
            if String(decoding: lookupKeyBytes(at: key), as: UTF8.self) == name { return key + 1 }
            key = self[key + 1].next
        }
        return nil
    }

    /// The object's members as `[converted key: value index]`, the first of duplicates winning —
    /// JSONDecoder's dictionary, built the way it builds it (the custom strategy's closure is called
    /// for every key, with the container's path plus the raw key).
    func memberTable(of object: UInt32, containerPath: UInt32) -> [String: UInt32] {
        var table: [String: UInt32] = [:]
        table.reserveCapacity(Int(self[object].length))
        let end = self[object].next
        var key = object + 1
        var pathForCustomStrategy: [any CodingKey]?
        while key < end {
            let raw = keyString(at: key)
            let converted: String
            switch options.keyStrategy {
            case .useDefaultKeys:
                converted = raw
            case .convertFromSnakeCase:
                converted = SnakeCaseKeys.convert(raw)
            case .custom(let convert):
                if pathForCustomStrategy == nil { pathForCustomStrategy = codingPath(containerPath) }
                var path = pathForCustomStrategy ?? []
                path.append(TapeCodingKey(stringValue: raw))
                converted = convert(path).stringValue
            }
            if table[converted] == nil { table[converted] = key + 1 }
            key = self[key + 1].next
        }
        return table
    }

    /// The key at tape index `key` as a string.
    @inline(__always)
    func keyString(at key: UInt32) -> String {
        let entry = self[key]
        return JSONStringUnescaping.string(rawBytes(of: entry), escaped: entry.flags & TapeEntry.escaped != 0)
    }
}
