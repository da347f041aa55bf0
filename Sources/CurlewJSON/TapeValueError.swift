// Curlew — why a value could not be read, and the errors JSONDecoder reports for it.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why reading a scalar failed, before the coding path is known (cheap to throw, typed).
enum TapeValueError: Error {
    /// The value is `null`.
    case valueNotFound
    /// The value is of another kind.
    case typeMismatch(found: TapeKind)
    /// A number that does not fit the requested type.
    case numberNotRepresentable(String)
}

/// A number that does not fit its type.
///
/// JSONDecoder throws its internal parse error for this from inside the decoding (a `Decodable`
/// that catches it does not see a `DecodingError`) and turns it into
/// `DecodingError.dataCorrupted` with an empty coding path only when it reaches the top. This error
/// plays the same part; ``dataCorrupted`` is what the top level throws.
struct JSONNumberNotRepresentable: Error, CustomStringConvertible {
    /// The number as written.
    let number: String
    /// The type it was decoded as.
    let typeName: String
    /// Where it is (for the message; JSONDecoder's error has an empty path).
    let codingPath: [any CodingKey]

    var description: String {
        let path = codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        return "Number \(number) is not representable in Swift as \(typeName) (at \"\(path)\")."
    }

    /// The error JSONDecoder reports at the top level: data corrupted, empty coding path.
    var dataCorrupted: DecodingError {
        .dataCorrupted(
            DecodingError.Context(
                codingPath: [], debugDescription: "The given data was not valid JSON. \(description)",
                underlyingError: self))
    }
}

extension TapeDocument {
    /// The error JSONDecoder reports for `failure` while decoding a `type` at the given path.
    func decodingError<T>(
        _ failure: TapeValueError, _ type: T.Type, at node: UInt32, _ component: PathComponent?
    ) -> any Error {
        let codingPath = self.codingPath(node, appending: component)
        switch failure {
        case .valueNotFound:
            return DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        case .typeMismatch(let found):
            return DecodingError.typeMismatch(
                type,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Expected to decode \(type) but found \(found.mismatchDescription) instead."))
        case .numberNotRepresentable(let number):
            return JSONNumberNotRepresentable(number: number, typeName: "\(type)", codingPath: codingPath)
        }
    }

    /// `DecodingError.keyNotFound` for a key missing from an object at `node`.
    func keyNotFound(_ key: any CodingKey, at node: UInt32) -> DecodingError {
        .keyNotFound(
            key,
            DecodingError.Context(
                codingPath: codingPath(node),
                debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
    }

    /// `DecodingError.dataCorrupted` at a path.
    func dataCorrupted(_ message: String, at node: UInt32, _ component: PathComponent? = nil) -> DecodingError {
        .dataCorrupted(
            DecodingError.Context(codingPath: codingPath(node, appending: component), debugDescription: message))
    }
}
