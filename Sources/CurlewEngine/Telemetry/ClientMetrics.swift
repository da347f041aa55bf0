// Curlew — a session's metrics, named as OpenTelemetry's HTTP client conventions name them, with their
// handlers made once per set of attributes.

import CoreMetrics

/// The names of the metrics a session records.
public enum ClientMetricNames {
    /// Duration of each physical request, seconds (OTel, stable).
    public static let requestDuration = "http.client.request.duration"
    /// Requests in flight (OTel, development).
    public static let activeRequests = "http.client.active_requests"
    /// Size of request bodies sent, bytes (OTel, development).
    public static let requestBodySize = "http.client.request.body.size"
    /// Size of response bodies received, bytes, decoded (OTel, development).
    public static let responseBodySize = "http.client.response.body.size"
    /// Open connections by state, `active` or `idle` (OTel, development).
    public static let openConnections = "http.client.open_connections"
    /// How long connections stayed open, seconds (OTel, development).
    public static let connectionDuration = "http.client.connection.duration"
    /// Time a request waited in the session's admission queue for a connection, seconds.
    public static let queueDuration = "curlew.client.request.queue.duration"
    /// Requests waiting in the session's admission queue.
    public static let queueLength = "curlew.client.queue.length"
    /// How long each phase of a transfer took (`curlew.phase`: `dns`, `connect`, `tls`, `first_byte`),
    /// seconds.
    public static let phaseDuration = "curlew.client.request.phase.duration"
    /// Requests a middleware sent again (a retry).
    public static let retries = "curlew.client.retries"
    /// Credentials refreshed by the authentication middleware.
    public static let refreshes = "curlew.client.auth.refreshes"
    /// Times a streamed response was paused because its reader was behind.
    public static let streamPauses = "curlew.client.stream.pauses"
}

/// A session's metrics: the factory and the handlers made from it, made once per set of attributes and
/// found again per request without hashing: per server (its pool key, usually the same object for every
/// request), then a short list of that server's attribute sets.
package final class ClientMetrics: Sendable {
    let factory: any MetricsFactory
    let recordsURLScheme: Bool
    /// The session's parsed URLs, for the server of a URL a counter is kept for.
    private let urls: ParsedURLCache

    /// The servers seen, and the last one asked for (most requests go to the server the previous one did).
    private struct Servers {
        var last: (key: PoolKey, server: ServerMetrics)?
        var all: [PoolKey: ServerMetrics] = [:]
    }

    private let servers = Locked(Servers())
    private let counters = Locked<[String: any CounterHandler]>([:])
    let queueLength: any MeterHandler

    init(factory: any MetricsFactory, recordsURLScheme: Bool, urls: ParsedURLCache) {
        self.factory = factory
        self.urls = urls
        self.recordsURLScheme = recordsURLScheme
        queueLength = factory.makeMeter(label: ClientMetricNames.queueLength, dimensions: [])
    }

    /// The metrics of the server of `key`.
    func server(_ key: PoolKey) -> ServerMetrics {
        servers.withLock { servers in
            if let last = servers.last, last.key === key { return last.server }
            let server: ServerMetrics
            if let known = servers.all[key] {
                server = known
            } else {
                server = ServerMetrics(self, key)
                // A client of very many servers keeps the first ones; the others get theirs made anew.
                if servers.all.count < Self.cacheLimit { servers.all[key] = server }
            }
            servers.last = (key, server)
            return server
        }
    }

    static let phaseNames = ["dns", "connect", "tls", "first_byte"]
    /// Beyond this many servers, or attribute sets of one server, handlers are made per request.
    static let cacheLimit = 1024

    // MARK: Counters

    /// Counts one of Curlew's counters (retries, refreshes) for the server of `url`, parsed as the session
    /// parses every URL.
    package func count(_ label: String, url: String) {
        guard case .success(let parsed) = urls.parsed(url) else { return }
        let key = parsed.poolKey
        let name = "\(label) \(key.serverAddress) \(key.port)"
        if let cached = counters.withLock({ $0[name] }) {
            cached.increment(by: 1)
            return
        }
        let made = factory.makeCounter(
            label: label, dimensions: [("server.address", key.serverAddress), ("server.port", String(key.port))])
        counters.withLock { cache in
            if cache[name] == nil, cache.count < Self.cacheLimit { cache[name] = made }
        }
        made.increment(by: 1)
    }

    /// OpenTelemetry's `network.protocol.version` for an HTTP version.
    static func protocolVersion(_ version: ResponseHead.HTTPVersion?) -> String? {
        switch version {
        case .http1_0?: "1.0"
        case .http1_1?: "1.1"
        case .http2?: "2"
        case .http3?: "3"
        default: nil
        }
    }
}
