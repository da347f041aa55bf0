// Curlew — why there is no value to decode at a key path.

/// Why ``JSONBodyDecoder/decode(_:from:atKeyPath:)`` found no value to decode.
package enum JSONKeyPathError: Error, Equatable {
    /// The document is not JSON.
    case notJSON
    /// The document has no value at the key path.
    case noValue
}
