// Curlew — the provider: targets in, responses out.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CurlewJSON
public import Logging

/// Sends requests for the targets of one API.
///
/// The provider is an actor whose state is its configuration; all the work of a request — building
/// it, encoding, the middleware chain and the transfer, validation and mapping — runs outside the
/// actor, so one provider serves many concurrent callers.
///
/// A request travels: endpoint closure → request closure → plugins' `prepare` and `willSend` → the
/// middleware chain (``middleware``, outermost first; then in-flight sharing when ``trackInflights`` is
/// on) → the transport, or a stubbed target's sample response → validation → plugins' `didReceive` and
/// `process`. Every call takes that one path: ``request(_:)``, ``stream(_:isolation:_:)``,
/// ``events(for:lastEventID:policy:reconnectTarget:)``, ``progress(for:)`` and the typed calls differ
/// only in how they take the response.
///
/// ```swift
/// let provider = Provider<GitHub>()
/// let response = try await provider.request(.zen)
/// ```
public actor Provider<Target: TargetType> {
    /// Turns a target into an endpoint.
    public typealias EndpointClosure = @Sendable (Target) -> Endpoint
    /// Turns an endpoint into the request to send; may change it (sign it, add cookies) or fail.
    public typealias RequestClosure = @Sendable (Endpoint) async throws -> TransportRequest
    /// Decides per target whether to stub.
    public typealias StubClosure = @Sendable (Target) -> StubBehavior

    /// How targets become endpoints.
    public nonisolated let endpointClosure: EndpointClosure
    /// How endpoints become requests.
    public nonisolated let requestClosure: RequestClosure
    /// Which targets are stubbed.
    public nonisolated let stubClosure: StubClosure
    /// The transport requests go through: the session the provider was given, or the process-wide
    /// ``/CurlewEngine/CurlSession/shared`` session (which reading this makes, if nothing has yet).
    public nonisolated var session: any HTTPTransport {
        if let givenTransport { return givenTransport.session }
        return ProviderTransport.processDefault.session
    }
    /// The plugins, in the order they run.
    public nonisolated let plugins: [any PluginType]
    /// The middleware around every exchange, outermost first (see ``TransportMiddleware``).
    public nonisolated let middleware: [any TransportMiddleware]
    /// Whether identical GET and HEAD requests in flight at the same time share one transfer.
    public nonisolated let trackInflights: Bool
    /// Where the provider's middleware log (each exchange's ``MiddlewareContext/logger``, with the
    /// target in its metadata).
    public nonisolated let logger: Logger
    /// The session given, with what the provider reads of it once; nil for the process-wide session, made
    /// on the first request instead (`ProviderTransport.processDefault`).
    nonisolated let givenTransport: ProviderTransport?
    /// The session's metrics, for the chain's counters (retries, refreshes).
    nonisolated var clientMetrics: ClientMetrics? {
        if let givenTransport { return givenTransport.clientMetrics }
        return ProviderTransport.processDefault.clientMetrics
    }
    /// Whether the session makes a span of each request, so that each call needs its context (its id).
    nonisolated var observesCalls: Bool {
        if let givenTransport { return givenTransport.recordsSpans }
        return ProviderTransport.processDefault.recordsSpans
    }
    /// Whether the logger takes debug lines (the engine's lines of each request), read once.
    nonisolated let logsCalls: Bool
    /// Whether ``requestClosure`` is the default one: the request is then the endpoint's, made without
    /// waiting (an event stream's attempt can start on the reading task).
    nonisolated let requestsByDefault: Bool
    /// What decodes the bodies of typed calls (`request(_:as:)`) unless they are given a decoder.
    @usableFromInline nonisolated let bodyDecoder: JSONBodyDecoder
    /// The chain's members: the user's middleware, then in-flight sharing. Empty: one call to the transport.
    nonisolated let members: [any TransportMiddleware]
    nonisolated let sharing: InflightSharing?
    /// ``session`` when it is a ``/CurlewEngine/CurlSession``, for an empty chain to call directly: through
    /// the protocol, each request costs the witness's own async frame and an executor hop.
    nonisolated var curlSession: CurlSession? {
        if let givenTransport { return givenTransport.curlSession }
        return ProviderTransport.processDefault.curlSession
    }

    /// Creates a provider.
    ///
    /// Nothing starts here: without a `session`, the process-wide one is made on the first request, so a
    /// provider an app holds but never calls costs no thread and no connection.
    ///
    /// ```swift
    /// // Targets name the production API; this provider sends them to the deployment configured.
    /// let provider = Provider<GitHub>(baseURL: configuration.gitHubURL, session: session)
    /// ```
    ///
    /// - Parameters:
    ///   - endpointClosure: Maps a target to an endpoint. Default (nil): ``defaultEndpointMapping(for:)``.
    ///   - baseURL: The base URL every target is sent to instead of its own `baseURL` (a deployment from
    ///     configuration: staging, a local server, a regional host). Each endpoint's URL that starts with
    ///     its target's `baseURL` has that start replaced, joined by the rules of
    ///     ``Endpoint/defaultURL(for:baseURL:)``; so an endpoint closure that starts from
    ///     ``Endpoint/default(for:)`` is rebased too, and a URL it builds from elsewhere is left alone.
    ///     Default (nil): each target's own.
    ///   - requestClosure: Builds (and may change or refuse) the request. Default (nil):
    ///     ``defaultRequestMapping(for:)``.
    ///   - stubClosure: Chooses stubbing per target. Default ``neverStub(_:)``.
    ///   - session: The transport. Default (nil): the process-wide ``/CurlewEngine/CurlSession/shared``
    ///     session, made on the first request that needs it.
    ///   - plugins: Plugins, run in this order.
    ///   - middleware: Middleware around every exchange, the first outermost (retries, authentication,
    ///     your own). Default: none.
    ///   - trackInflights: Share one transfer among identical GET/HEAD requests in flight.
    ///   - decoder: The `JSONDecoder` settings for typed calls (its strategies and user info are copied
    ///     now; later changes to it are not seen). Default: a plain `JSONDecoder`.
    ///   - logger: Where middleware log. Default: label `curlew`.
    public init(
        endpointClosure: EndpointClosure? = nil,
        baseURL: URL? = nil,
        requestClosure: RequestClosure? = nil,
        stubClosure: @escaping StubClosure = Provider.neverStub,
        session: (any HTTPTransport)? = nil,
        plugins: [any PluginType] = [],
        middleware: [any TransportMiddleware] = [],
        trackInflights: Bool = false,
        decoder: JSONDecoder = JSONDecoder(),
        logger: Logger = MiddlewareContext.defaultLogger
    ) {
        self.endpointClosure = Self.endpointMapping(endpointClosure, baseURL: baseURL)
        self.requestClosure = requestClosure ?? Self.defaultRequestMapping
        requestsByDefault = requestClosure == nil
        self.stubClosure = stubClosure
        givenTransport = session.map(ProviderTransport.init)
        self.plugins = plugins
        self.middleware = middleware
        self.trackInflights = trackInflights
        self.logger = logger
        logsCalls = logger.logLevel <= .debug
        self.bodyDecoder = JSONBodyDecoder(decoder)
        let sharing = trackInflights ? InflightSharing() : nil
        self.sharing = sharing
        members = middleware + (sharing.map { [$0] } ?? [])
    }

    /// The number of distinct shared transfers in flight (with ``trackInflights``).
    public var inflightCount: Int { sharing?.count ?? 0 }
}

extension Provider {
    /// The default endpoint: `baseURL` joined with `path`, the target's method, task and headers, and
    /// its `sampleData` as a 200 sample response.
    public static func defaultEndpointMapping(for target: Target) -> Endpoint {
        Endpoint.default(for: target)
    }

    /// The endpoint closure a provider runs: `closure` (or the default), its URLs rebased onto `baseURL`.
    static func endpointMapping(_ closure: EndpointClosure?, baseURL: URL?) -> EndpointClosure {
        guard let baseURL else { return closure ?? defaultEndpointMapping }
        guard let closure else {
            // Joined directly (and through the joined-URL cache), not built and then rebased.
            return { target in Endpoint.default(for: target, baseURL: baseURL) }
        }
        return { target in closure(target).rebased(from: target.baseURL, to: baseURL) }
    }

    /// The default request: the endpoint's request, unchanged.
    @Sendable public static func defaultRequestMapping(for endpoint: Endpoint) async throws -> TransportRequest {
        try endpoint.urlRequest()
    }

    /// Never stub: every request goes over the network.
    public static func neverStub(_ target: Target) -> StubBehavior { .never }

    /// Answer every request at once with its sample response.
    public static func immediatelyStub(_ target: Target) -> StubBehavior { .immediate }

    /// Answer every request with its sample response after `delay`.
    public static func delayedStub(_ delay: Duration) -> StubClosure {
        { _ in .delayed(delay) }
    }
}
