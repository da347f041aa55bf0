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

    /// Whether `code` passes: in ``statusCodes``, or anything when they are empty. Without building the
    /// array, which every validated request would allocate.
    func accepts(_ code: Int) -> Bool {
        switch self {
        case .none: true
        case .successCodes: (200...299).contains(code)
        case .successAndRedirectCodes: (200...399).contains(code)
        case .customCodes(let codes): codes.isEmpty || codes.contains(code)
        }
    }
}
