// Curlew — why Curlew's encodings refuse parameters.

/// Why one of Curlew's encodings could not encode parameters.
///
/// Building a request wraps it in ``CurlewError/parameterEncoding(_:)``.
public enum ParameterEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request's URL (carried here) could not take a query string.
    case invalidURL(String)
    /// A value cannot be represented in the encoding's format; the text says which and why.
    case unencodable(String)

    /// A sentence describing the failure.
    public var description: String {
        switch self {
        case .invalidURL(let url): "cannot add a query string to \(url)"
        case .unencodable(let reason): "cannot encode the parameters: \(reason)"
        }
    }
}
