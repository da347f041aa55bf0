// Curlew — the flat tape a JSON document is parsed into: one small entry per value.

/// The kind of a JSON value on the tape.
enum TapeKind: UInt8 {
    /// `null`.
    case null
    /// `true`.
    case `true`
    /// `false`.
    case `false`
    /// A number.
    case number
    /// A string.
    case string
    /// An object.
    case object
    /// An array.
    case array

    /// How JSONDecoder names a value of this kind in a type-mismatch message.
    var mismatchDescription: String {
        switch self {
        case .null: "null"
        case .true, .false: "bool"
        case .number: "number"
        case .string: "a string"
        case .object: "a dictionary"
        case .array: "an array"
        }
    }
}

/// One JSON value on the tape.
///
/// Values are stored in document order; an object's members follow it as key, value, key, value, and
/// every entry records the tape index just past itself and its descendants, so a value of any size
/// is skipped in one step.
struct TapeEntry {
    /// What the value is.
    var kind: TapeKind
    /// Strings: ``TapeEntry/escaped``, ``TapeEntry/nonASCII``. Numbers: ``TapeEntry/integral``.
    var flags: UInt8
    /// Objects: how their keys are looked up (a ``KeyLookupMode`` raw value), decided on first use.
    var lookupMode: UInt8 = 0
    /// Strings: the byte offset of the content in the document (after the quote). Numbers, `true`,
    /// `false`, `null`, arrays and empty objects: the byte offset of the value. Other objects: the tape
    /// index of the key to try first on the next lookup.
    var offset: UInt32
    /// Strings: the content's byte length. Numbers, `true`, `false` and `null`: the value's byte length.
    /// Arrays and objects: the element or member count.
    var length: UInt32
    /// The tape index just past this value and everything nested in it.
    var next: UInt32

    /// The string contains escape sequences (its bytes are not its value).
    static let escaped: UInt8 = 1
    /// The string contains non-ASCII (multi-byte UTF-8) characters.
    static let nonASCII: UInt8 = 2
    /// The number is written as a plain integer: no fraction, no exponent.
    static let integral: UInt8 = 4
}

/// A growable buffer of tape entries, owned by whoever finally holds it (see ``TapeDocument``).
struct TapeBuilder {
    /// The entries (valid up to ``count``).
    private(set) var entries: UnsafeMutablePointer<TapeEntry>
    /// How many entries there are.
    private(set) var count = 0
    private var capacity: Int

    /// Allocates room for `capacity` entries (at least 16).
    init(capacity: Int) {
        self.capacity = max(16, capacity)
        entries = .allocate(capacity: self.capacity)
    }

    /// Appends an entry and returns its index.
    @inline(__always) @discardableResult
    mutating func append(_ entry: TapeEntry) -> Int {
        if count == capacity { grow() }
        (entries + count).initialize(to: entry)
        count += 1
        return count - 1
    }

    @inline(never)
    private mutating func grow() {
        let larger = UnsafeMutablePointer<TapeEntry>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: entries, count: count)
        entries.deallocate()
        entries = larger
        capacity *= 2
    }

    /// Frees the entries (after a refused parse; a finished tape is handed to a ``TapeDocument``).
    func deallocate() {
        entries.deallocate()
    }
}
