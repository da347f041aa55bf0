// Curlew — a retry policy's methods and statuses in the form a RetryMiddleware reads on every request.

import HTTPTypes

/// The methods and statuses of a ``RetryPolicy``, worked out once when the middleware is made: every
/// request asks whether its method is retried and every response whether its status is, and hashing a
/// method's name or a status for a `Set` costs more than comparing a few short strings or testing a bit.
/// Answers exactly what the policy's sets answer.
struct RetryLookup: Sendable {
    /// The retried methods, GET first, when there are few; nil: asked of `methodSet`.
    private let methodList: [HTTPRequest.Method]?
    private let methodSet: Set<HTTPRequest.Method>
    /// One bit per status below `Self.bitCount`; statuses at or above it are asked of `statusSet`.
    private let statusBits: [UInt64]
    private let statusSet: Set<Int>

    private static let bitCount = 640
    private static let shortList = 8

    init(_ policy: RetryPolicy) {
        methodSet = policy.methods
        methodList =
            policy.methods.count <= Self.shortList
            ? policy.methods.sorted { ($0 == .get ? 0 : 1, $0.rawValue) < ($1 == .get ? 0 : 1, $1.rawValue) } : nil
        statusSet = policy.statuses
        var bits = [UInt64](repeating: 0, count: Self.bitCount / 64)
        for status in policy.statuses where (0..<Self.bitCount).contains(status) {
            bits[status / 64] |= 1 << UInt64(status % 64)
        }
        statusBits = bits
    }

    /// Whether the policy's ``RetryPolicy/methods`` contains `method`.
    @inline(__always)
    func retries(_ method: HTTPRequest.Method) -> Bool {
        guard let methodList else { return methodSet.contains(method) }
        return methodList.contains(method)
    }

    /// Whether the policy's ``RetryPolicy/statuses`` contains `status`.
    @inline(__always)
    func lists(_ status: Int) -> Bool {
        guard status >= 0, status < Self.bitCount else { return statusSet.contains(status) }
        return statusBits[status / 64] & (1 << UInt64(status % 64)) != 0
    }
}
