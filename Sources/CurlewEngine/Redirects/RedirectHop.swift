// Curlew — one redirect, as a custom redirect policy sees it, and as a response records it.

public import HTTPTypes

/// One redirect about to be followed.
public struct RedirectHop: Sendable {
    /// The URL that answered with the redirect.
    public let from: String
    /// The status of that answer (301, 302, 303, 307 or 308).
    public let status: HTTPResponse.Status
    /// Where the next request goes: the `Location`, resolved against ``from``.
    public let to: String
    /// The next request, as it will be sent (method rewritten and fields dropped by the rules).
    public let nextRequest: TransportRequest
    /// How many hops this request has made before this one (0 for the first redirect).
    public let hopsSoFar: Int
    /// Whether the hop leaves the origin (scheme, host or port differ).
    public let leavesOrigin: Bool
}

/// A response in a request's redirect chain: the URL requested and the redirect status it answered with.
public struct RedirectStep: Sendable, Hashable {
    /// The URL requested.
    public let url: String
    /// The redirect status it answered with.
    public let status: HTTPResponse.Status

    /// Creates a step.
    public init(url: String, status: HTTPResponse.Status) {
        self.url = url
        self.status = status
    }
}
