// Curlew — whether and how a target's request is answered by its sample response.

/// How the provider answers a target: over the network, or with the endpoint's sample response.
public enum StubBehavior: Sendable, Hashable {
    /// Send the request over the network.
    case never
    /// Answer at once with the sample response.
    case immediate
    /// Answer with the sample response after this delay (cancellable).
    case delayed(Duration)
}
