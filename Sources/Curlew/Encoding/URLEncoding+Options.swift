// Curlew — the choices URLEncoding offers: destination, array style, Boolean style.

extension URLEncoding {
    /// Where the encoded parameters go.
    public enum Destination: Sendable, Hashable {
        /// GET, HEAD and DELETE put them in the query string; other methods in the body.
        case methodDependent
        /// Always the query string.
        case queryString
        /// Always the body.
        case httpBody
    }

    /// How array values are written.
    public enum ArrayEncoding: Sendable, Hashable {
        /// `key[]=1&key[]=2`.
        case brackets
        /// `key=1&key=2`.
        case noBrackets
        /// `key[0]=1&key[1]=2`.
        case indexInBrackets
    }

    /// How Boolean values are written.
    public enum BoolEncoding: Sendable, Hashable {
        /// `1` and `0`.
        case numeric
        /// `true` and `false`.
        case literal
    }
}
