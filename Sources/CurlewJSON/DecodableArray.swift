// Curlew — arrays decoded straight off the tape, as Array's own init(from:) would decode them.

/// `[Element]` for a decodable element type.
///
/// `Array.init(from:)` reads an unkeyed container element by element, growing the array as it goes;
/// the tape knows the element count and where each element is, so the array is built in one
/// allocation without the container. Values and errors are the same.
protocol DecodableArray {
    /// Decodes the array the decoder currently points at; `type` is `Self`.
    static func decodeElements<R>(_ decoder: TapeDecoder, as type: R.Type) throws -> R
}

extension Array: DecodableArray where Element: Decodable {
    static func decodeElements<R>(_ decoder: TapeDecoder, as type: R.Type) throws -> R {
        let document = decoder.document
        let array = decoder.value
        let path = decoder.path
        let entry = document[array]
        guard entry.kind == .array else {
            // What `decoder.unkeyedContainer()` throws in `Array.init(from:)`.
            throw decoder.containerFailure(entry.kind, [Any].self, "unkeyed decoding container", at: path)
        }
        var elements: [Element] = []
        elements.reserveCapacity(Int(entry.length))
        var element = array + 1
        var position = 0
        while element < entry.next {
            elements.append(try decoder.unwrap(element, as: Element.self, parent: path, component: .index(position)))
            element = document[element].next
            position += 1
        }
        guard R.self == Self.self else {
            throw DecodingError.typeMismatch(
                R.self, DecodingError.Context(codingPath: document.codingPath(path), debugDescription: "Not \(R.self).")
            )
        }
        // R is Self (checked above), so the cast is an identity.
        return unsafeBitCast(elements, to: R.self)
    }
}

/// A type and its ``DecodableArray`` conformance.
struct ArrayConformance {
    /// The type.
    let type: ObjectIdentifier
    /// The type as a `DecodableArray`; nil when it is not an array.
    let conformance: (any DecodableArray.Type)?
}

extension TapeDocument {
    /// `type` as a ``DecodableArray``, or nil when it is not an array.
    @inline(__always)
    func arrayConformance<T>(of type: T.Type) -> (any DecodableArray.Type)? {
        let identifier = ObjectIdentifier(type)
        for index in arrayConformances.indices where arrayConformances[index].type == identifier {
            return arrayConformances[index].conformance
        }
        // The runtime's conformance lookup costs hundreds of instructions; a document decodes few
        // types, many times each, so each type is looked up once.
        let conformance = type as? any DecodableArray.Type
        arrayConformances.append(ArrayConformance(type: identifier, conformance: conformance))
        return conformance
    }
}
