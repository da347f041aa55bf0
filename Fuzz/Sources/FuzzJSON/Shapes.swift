// The shapes FuzzJSON decodes: two generic readers of any document (one through single-value probing,
// one through every container method), and typed shapes for number ranges, strategies and keys.

import Foundation

/// The shapes, chosen by the input's first byte.
let shapes: [Shape] = [
    Shape(JSONValue.self, maximumNesting: 64),
    Shape(Walk.self, maximumNesting: 64),
    Shape([String: Int].self, membersInAnyOrder: true),
    Shape([Double].self),
    Shape([Float].self),
    Shape(Int64.self),
    Shape(UInt8.self),
    Shape(String.self),
    Shape([String].self),
    Shape(Record.self, membersInAnyOrder: true),
    Shape(Account.self, membersInAnyOrder: true),
    Shape([Date].self),
    Shape([Data].self),
    Shape([Each<URL>].self),
    Shape([Each<Decimal>].self),
    Shape([Each<Int128>].self),
    Shape([Each<UInt64>].self),
    Shape([Int8].self),
    Shape(IntKeyed.self),
    Shape([[String: Double?]].self, membersInAnyOrder: true),
    Shape(Bool?.self),
    Shape([Each<UInt128>].self),
    Shape([Int32?].self),
    Shape(Double.self),
    Shape([Each<Date>].self),
    Shape([Each<Data>].self),
    Shape([Each<Float>].self),
    Shape([Each<Int16>].self),
]

/// Any coding key.
struct AnyKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

/// A container's keys in a fixed order (by scalars), whatever order the decoder reports them in.
private func sortedKeys(_ container: KeyedDecodingContainer<AnyKey>) -> [AnyKey] {
    container.allKeys.sorted { $0.stringValue.unicodeScalars.lexicographicallyPrecedes($1.stringValue.unicodeScalars) }
}

/// One value of type `T`, or the error decoding it (by its shape): an array of these decodes every element,
/// where an array of `T` stops at the first that fails.
struct Each<T: Decodable>: Decodable {
    let outcome: String

    init(from decoder: any Decoder) throws {
        do {
            outcome = canonical(try decoder.singleValueContainer().decode(T.self))
        } catch {
            outcome = errorShape(error)
        }
    }
}

/// Any JSON value, as a generic JSON model reads it: `null`, then the scalars in turn through a
/// single-value container, then an array, then an object.
indirect enum JSONValue: Decodable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? single.decode(UInt64.self) {
            self = .uint(value)
        } else if let value = try? single.decode(Double.self) {
            self = .double(value)
        } else if let value = try? single.decode(String.self) {
            self = .string(value)
        } else if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
        } else {
            let object = try decoder.container(keyedBy: AnyKey.self)
            self = .object(try sortedKeys(object).map { ($0.stringValue, try object.decode(JSONValue.self, forKey: $0)) })
        }
    }
}

/// A log of reading a document through every container method: nil checks, the typed `decode` and
/// `decodeIfPresent` overloads (a failed one must leave an unkeyed container where it was), nested
/// containers, super-decoders, `contains`, missing keys and reading past an array's end.
struct Walk: Decodable {
    private(set) var log: [String] = []

    init(from decoder: any Decoder) throws {
        log.append("at [\(pathShape(decoder.codingPath))]")
        try value(decoder)
    }

    private mutating func value(_ decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            log.append("null")
        } else if let value = try? single.decode(UInt16.self) {
            log.append("u16 \(value)")
        } else if let value = try? single.decode(Int8.self) {
            log.append("i8 \(value)")
        } else if let value = try? single.decode(Float.self) {
            log.append("float " + canonical(value))
        } else if let value = try? single.decode(Decimal.self) {
            log.append(canonical(value))
        } else if let value = try? single.decode(String.self) {
            log.append("string " + show(value))
        } else if let value = try? single.decode(Bool.self) {
            log.append("bool \(value)")
        } else if var array = try? decoder.unkeyedContainer() {
            try elements(&array)
        } else {
            try members(try decoder.container(keyedBy: AnyKey.self))
        }
    }

    private mutating func elements(_ array: inout any UnkeyedDecodingContainer) throws {
        log.append("array of \(array.count.map { "\($0)" } ?? "?") at [\(pathShape(array.codingPath))]")
        while !array.isAtEnd {
            let index = array.currentIndex
            if try array.decodeNil() {
                log.append("\(index): null")
            } else if let value = try? array.decode(Int16.self) {
                log.append("\(index): i16 \(value)")
            } else if let value = try? array.decodeIfPresent(UInt32.self) {
                log.append("\(index): u32 \(value)")
            } else if let value = try? array.decode(Double.self) {
                log.append("\(index): double " + canonical(value))
            } else if let value = try? array.decodeIfPresent(String.self) {
                log.append("\(index): string " + show(value))
            } else if let value = try? array.decode(Bool.self) {
                log.append("\(index): bool \(value)")
            } else if var nested = try? array.nestedUnkeyedContainer() {
                try elements(&nested)
            } else if let nested = try? array.nestedContainer(keyedBy: AnyKey.self) {
                try members(nested)
            } else {
                let superDecoder = try array.superDecoder()
                log.append("\(index): super at [\(pathShape(superDecoder.codingPath))]")
                try value(superDecoder)
            }
            log.append("next \(array.currentIndex) end \(array.isAtEnd)")
        }
        // Past the end: decodeIfPresent is nil and still counts up; the rest throw.
        log.append("past end \(canonical(try array.decodeIfPresent(Bool.self) as Any)) index \(array.currentIndex)")
        log.append("decode " + failure { _ = try array.decode(Int.self) })
        log.append("decodeNil " + failure { _ = try array.decodeNil() })
        log.append("nested " + failure { _ = try array.nestedUnkeyedContainer() })
        log.append("keyed " + failure { _ = try array.nestedContainer(keyedBy: AnyKey.self) })
        log.append("super " + failure { _ = try array.superDecoder() })
    }

    private mutating func members(_ object: KeyedDecodingContainer<AnyKey>) throws {
        let keys = sortedKeys(object)
        log.append("object of \(keys.count) at [\(pathShape(object.codingPath))]")
        for key in keys {
            let name = show(key.stringValue)
            log.append("\(name) contained \(object.contains(key))")
            if try object.decodeNil(forKey: key) {
                log.append("\(name): null \(canonical(try object.decodeIfPresent(Int.self, forKey: key) as Any))")
            } else if let value = try? object.decode(Int32.self, forKey: key) {
                log.append("\(name): i32 \(value)")
            } else if let value = try? object.decodeIfPresent(UInt64.self, forKey: key) {
                log.append("\(name): u64 " + canonical(value as Any))
            } else if let value = try? object.decode(Float.self, forKey: key) {
                log.append("\(name): float " + canonical(value))
            } else if let value = try? object.decode(String.self, forKey: key) {
                log.append("\(name): string " + show(value))
            } else if let value = try? object.decodeIfPresent(Bool.self, forKey: key) {
                log.append("\(name): bool " + canonical(value as Any))
            } else if var nested = try? object.nestedUnkeyedContainer(forKey: key) {
                try elements(&nested)
            } else if let nested = try? object.nestedContainer(keyedBy: AnyKey.self, forKey: key) {
                try members(nested)
            } else {
                let superDecoder = try object.superDecoder(forKey: key)
                log.append("\(name): super at [\(pathShape(superDecoder.codingPath))]")
                try value(superDecoder)
            }
        }
        // Names that equal keys only as Swift strings compare them (canonical equivalence: the Kelvin sign
        // is `K`, `e` + U+0301 is `é`), and names a key strategy may produce.
        for probe in ["K", "\u{212A}", "\u{E9}", "e\u{301}", "\u{C5}", "\u{212B}", "userId", "user_id", ""] {
            let key = AnyKey(stringValue: probe)
            let found = (try? object.decodeIfPresent(String.self, forKey: key)).map { canonical($0 as Any) } ?? "error"
            log.append("probe \(show(probe)) contained \(object.contains(key)) string \(found)")
        }
        let missing = AnyKey(stringValue: "missing\u{1}")
        log.append("missing contained \(object.contains(missing))")
        log.append("missing ifPresent " + canonical(try object.decodeIfPresent(Int.self, forKey: missing) as Any))
        log.append("missing decode " + failure { _ = try object.decode(Int.self, forKey: missing) })
        log.append("missing decodeNil " + failure { _ = try object.decodeNil(forKey: missing) })
        log.append("missing nested " + failure { _ = try object.nestedUnkeyedContainer(forKey: missing) })
        // The `super` key, or null when there is none.
        let superDecoder = try object.superDecoder()
        log.append("super at [\(pathShape(superDecoder.codingPath))]")
        try value(superDecoder)
    }

    /// The error `body` throws, by its shape.
    private func failure(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "no error"
        } catch {
            return errorShape(error)
        }
    }
}

/// The members of an object whose keys are integers, as `[Int: Bool]` reads them but in a fixed order:
/// `Dictionary<Int, _>.init(from:)` stores each member under `Int(key)` in `allKeys` order, so with keys
/// such as `1` and `01` its value depends on that order (intended difference, see `Shape`). Its key type
/// refuses other keys, so `allKeys` must leave them out.
struct IntKeyed: Decodable {
    struct IntKey: CodingKey {
        let stringValue: String
        let intValue: Int?

        init?(stringValue: String) {
            guard let value = Int(stringValue) else { return nil }
            self.stringValue = stringValue
            intValue = value
        }

        init?(intValue: Int) {
            stringValue = "\(intValue)"
            self.intValue = intValue
        }
    }

    let members: [String]

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: IntKey.self)
        let keys = container.allKeys.sorted {
            $0.stringValue.unicodeScalars.lexicographicallyPrecedes($1.stringValue.unicodeScalars)
        }
        members = try keys.map { key in
            "\(show(key.stringValue)) \(key.intValue ?? 0): \(try container.decode(Bool.self, forKey: key))"
        }
    }
}

/// A record of optional members of many types: most documents decode partly, through each type's
/// path (strategies included); with snake case, `user_id` is `userId`.
struct Record: Decodable {
    enum Level: Int, Decodable {
        case low = 1
        case high = 2
    }

    enum Color: String, Decodable {
        case red
        case green
    }

    let userId: Int?
    let displayName: String?
    let score: Double?
    let ratio: Float?
    let small: Int8?
    let big: UInt64?
    let huge: Int128?
    let isAdmin: Bool?
    let tags: [String]?
    let counts: [String: Int]?
    let createdAt: Date?
    let avatar: Data?
    let homePage: URL?
    let amount: Decimal?
    let children: [Record]?
    let level: Level?
    let color: Color?
    let naïve: String?
}

/// A record whose members are required: missing keys and nulls are errors with their paths.
struct Account: Decodable {
    struct Role: Decodable {
        let title: String
        let since: Date?
        let weight: Float
    }

    let id: UInt32
    let name: String
    let roles: [Role]
    let limits: [String: Double]
    let active: Bool
}
