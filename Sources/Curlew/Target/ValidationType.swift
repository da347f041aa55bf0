// Curlew — which status codes a target accepts.

/// Which response status codes a target treats as success; others fail with ``CurlewError/statusCode(_:)``.
public enum ValidationType: Sendable, Hashable {
    /// Accept every status code.
    case none
    /// Accept 200–299.
    case successCodes
    /// Accept 200–399.
    case successAndRedirectCodes
    /// Accept exactly these codes.
    case customCodes([Int])

    /// The accepted codes, in ascending order for the ranges; empty for ``none``, which checks nothing.
    public var statusCodes: [Int] {
        switch self {
        case .none: []
        case .successCodes: Array(200...299)
        case .successAndRedirectCodes: Array(200...399)
        case .customCodes(let codes): codes
        }
    }
}
