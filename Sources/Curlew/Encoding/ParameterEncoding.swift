// Curlew — how parameters are put into a request.

/// Places parameters into a request: its query string, its body, or anywhere a custom encoding likes.
///
/// Curlew ships ``URLEncoding``, ``JSONEncoding`` and ``PropertyListEncoding``; conform your own type
/// (an XML or a header encoding, say) to use it in ``RequestTask/requestParameters(parameters:encoding:)``.
/// Encodings are values shared across tasks, hence `Sendable`.
public protocol ParameterEncoding: Sendable {
    /// Returns `request` with `parameters` encoded into it.
    ///
    /// - Parameters:
    ///   - request: The request built so far from the endpoint (URL, method, header fields).
    ///   - parameters: The parameters to encode; nil means there are none.
    /// - Returns: The request with the parameters in place.
    /// - Throws: ``ParameterEncodingError`` (or any error of a custom encoding); building the request
    ///   reports it as ``CurlewError/parameterEncoding(_:)`` and nothing is sent.
    func encode(_ request: TransportRequest, with parameters: [String: JSONValue]?) throws -> TransportRequest
}
