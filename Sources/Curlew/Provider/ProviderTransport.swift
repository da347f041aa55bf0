// Curlew — the transport a provider sends through, and what the provider reads of it once.

/// A provider's session with what the provider asks of it on every request, read once: whether it is a
/// ``/CurlewEngine/CurlSession`` (called directly, without the protocol's frame), its metrics, and whether
/// it records spans.
struct ProviderTransport: Sendable {
    let session: any HTTPTransport
    let curlSession: CurlSession?
    let clientMetrics: ClientMetrics?
    let recordsSpans: Bool

    init(_ session: any HTTPTransport) {
        self.session = session
        let curlSession = session as? CurlSession
        self.curlSession = curlSession
        clientMetrics = curlSession?.clientMetrics
        recordsSpans = curlSession?.recordsSpans ?? false
    }

    /// The process-wide session's, for providers given none: made on first use (a static `let` is
    /// initialised once, thread-safely), so a provider that is never called starts nothing.
    static let processDefault = ProviderTransport(CurlSession.shared)
}
