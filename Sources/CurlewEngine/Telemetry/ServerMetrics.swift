// Curlew — one server's metric handlers: its connections, its requests in flight per method, and the
// handlers of its ended requests per set of attributes, each made once.

import CoreMetrics
import HTTPTypes

/// The metric handlers of one server (scheme, host and port).
final class ServerMetrics: Sendable {
    /// The attributes every metric of this server carries.
    private let base: [(String, String)]
    private let factory: any MetricsFactory
    /// The handlers of the server's ended requests.
    let ended: EndedRequests
    /// Connections: open and active, open and idle, and their lifetimes.
    let activeConnections: any MeterHandler
    let idleConnections: any MeterHandler
    let connectionDuration: any TimerHandler

    /// Requests per method: a short list searched in order (a server sees few methods), keys and values
    /// apart so that a search compares keys in place instead of copying each entry.
    private struct Methods {
        var names: [String] = []
        var metrics: [MethodMetrics] = []
    }

    private let methods = Locked(Methods())

    init(_ metrics: ClientMetrics, _ key: PoolKey) {
        factory = metrics.factory
        var base = [("server.address", key.serverAddress), ("server.port", String(key.port))]
        if metrics.recordsURLScheme { base.append(("url.scheme", key.scheme)) }
        self.base = base
        activeConnections = factory.makeMeter(
            label: ClientMetricNames.openConnections, dimensions: base + [("http.connection.state", "active")])
        idleConnections = factory.makeMeter(
            label: ClientMetricNames.openConnections, dimensions: base + [("http.connection.state", "idle")])
        connectionDuration = factory.makeTimer(label: ClientMetricNames.connectionDuration, dimensions: base)
        connectionDuration.preferDisplayUnit(.seconds)
        ended = EndedRequests(factory: factory, base: base)
    }

    /// Sets the open connections, active and idle.
    func setConnections(active: Int, idle: Int) {
        activeConnections.set(Int64(active))
        idleConnections.set(Int64(idle))
    }

    /// The metrics of this server's requests with `method`.
    func requests(_ method: String) -> MethodMetrics {
        methods.withLock { methods in
            if let index = methods.names.firstIndex(of: method) { return methods.metrics[index] }
            let active = factory.makeMeter(
                label: ClientMetricNames.activeRequests, dimensions: [("http.request.method", method)] + base)
            let made = MethodMetrics(ended, method: method, active: active)
            if methods.names.count < ClientMetrics.cacheLimit {
                methods.names.append(method)
                methods.metrics.append(made)
            }
            return made
        }
    }
}

/// The handlers of one server's ended requests, per set of attributes, each made once.
final class EndedRequests: Sendable {
    private let factory: any MetricsFactory
    /// The server's attributes.
    private let base: [(String, String)]
    /// Times a streamed response from this server paused because its reader was behind.
    let streamPauses: any CounterHandler

    /// A short list searched in order: a server sees few statuses and error types.
    private struct Handlers {
        var attributes: [EndAttributes] = []
        var handlers: [RequestHandlers] = []
    }

    private let handlers = Locked(Handlers())

    init(factory: any MetricsFactory, base: [(String, String)]) {
        self.factory = factory
        self.base = base
        streamPauses = factory.makeCounter(label: ClientMetricNames.streamPauses, dimensions: Array(base.prefix(2)))
    }

    /// What an ended request's metrics are told apart by, besides its server.
    struct EndAttributes: Equatable {
        let method: String
        let status: Int?
        let errorType: String?
        let protocolVersion: String?
        /// The call's operation (an OpenAPI operation id), when it named one.
        let operation: String?
    }

    /// The handlers of a request that ended with `attributes`.
    func handlers(_ attributes: EndAttributes) -> RequestHandlers {
        handlers.withLock { handlers in
            if let index = handlers.attributes.firstIndex(of: attributes) { return handlers.handlers[index] }
            let made = RequestHandlers(factory, dimensions(attributes))
            if handlers.attributes.count < ClientMetrics.cacheLimit {
                handlers.attributes.append(attributes)
                handlers.handlers.append(made)
            }
            return made
        }
    }

    private func dimensions(_ attributes: EndAttributes) -> [(String, String)] {
        var dimensions = [("http.request.method", attributes.method), base[0], base[1]]
        if let status = attributes.status { dimensions.append(("http.response.status_code", String(status))) }
        if let errorType = attributes.errorType { dimensions.append(("error.type", errorType)) }
        if let version = attributes.protocolVersion { dimensions.append(("network.protocol.version", version)) }
        dimensions += base.dropFirst(2)
        if let operation = attributes.operation { dimensions.append(("curlew.operation", operation)) }
        return dimensions
    }
}

/// The handlers of the requests that ended with one set of attributes.
final class RequestHandlers: Sendable {
    let duration: any TimerHandler
    let requestBodySize: any RecorderHandler
    let responseBodySize: any RecorderHandler
    let queueDuration: any TimerHandler
    /// dns, connect, tls, first_byte.
    let phases: [any TimerHandler]

    /// Records an ended request: its duration, body sizes, queue time and the phases that happened (a
    /// reused connection has no lookup or connect of its own).
    func record(elapsed: Int64, requestBodySize: Int?, responseBodySize: Int?, timings: TransferTimings?) {
        duration.recordNanoseconds(elapsed)
        if let requestBodySize { self.requestBodySize.record(Int64(requestBodySize)) }
        if let responseBodySize { self.responseBodySize.record(Int64(responseBodySize)) }
        guard let timings else { return }
        queueDuration.recordNanoseconds(MethodMetrics.nanoseconds(timings.queued))
        record(timings.nameLookup, phase: 0)
        record(timings.connect, phase: 1)
        record(timings.tlsHandshake, phase: 2)
        record(timings.firstByte, phase: 3)
    }

    @inline(__always)
    private func record(_ phase: Duration, phase index: Int) {
        let nanoseconds = MethodMetrics.nanoseconds(phase)
        if nanoseconds > 0 { phases[index].recordNanoseconds(nanoseconds) }
    }

    init(_ factory: any MetricsFactory, _ dimensions: [(String, String)]) {
        duration = factory.makeTimer(label: ClientMetricNames.requestDuration, dimensions: dimensions)
        duration.preferDisplayUnit(.seconds)
        requestBodySize = factory.makeRecorder(label: ClientMetricNames.requestBodySize, dimensions: dimensions, aggregate: true)
        responseBodySize = factory.makeRecorder(label: ClientMetricNames.responseBodySize, dimensions: dimensions, aggregate: true)
        queueDuration = factory.makeTimer(label: ClientMetricNames.queueDuration, dimensions: dimensions)
        queueDuration.preferDisplayUnit(.seconds)
        phases = ClientMetrics.phaseNames.map { phase in
            let timer = factory.makeTimer(
                label: ClientMetricNames.phaseDuration, dimensions: dimensions + [("curlew.phase", phase)])
            timer.preferDisplayUnit(.seconds)
            return timer
        }
    }
}

/// One server's requests with one method: in flight, and how each ended. The record of every such hop
/// when only metrics are recorded (nothing of a hop's own is kept: the engine hands its start back).
final class MethodMetrics: HopRecord {
    private let server: EndedRequests
    let method: String
    private let active: any MeterHandler

    init(_ server: EndedRequests, method: String, active: any MeterHandler) {
        self.server = server
        self.method = method
        self.active = active
    }

    /// A request with this method started.
    func started() {
        active.increment(by: 1)
    }

    var injectsFields: Bool { false }

    func inject(into fields: inout HTTPFields) {}

    func ended(_ outcome: TransferOutcome, streamed: HopEnd?, hop: HopFacts) {
        // A collected response is read where it is; anything else through a HopEnd.
        guard case .success(let response) = outcome else {
            ended(HopEnd(outcome, streamed: streamed), hop: hop)
            return
        }
        active.decrement(by: 1)
        let status = response.status.code
        let handlers = server.handlers(
            .init(
                method: method, status: status, errorType: status >= 400 ? String(status) : nil,
                protocolVersion: ClientMetrics.protocolVersion(response.httpVersion), operation: hop.operation))
        handlers.record(
            elapsed: Self.elapsed(from: hop.started, to: MonotonicClock.now()), requestBodySize: hop.requestBodySize,
            responseBodySize: response.body.count, timings: response.timings)
    }

    func ended(_ end: HopEnd, hop: HopFacts) {
        active.decrement(by: 1)
        let handlers = server.handlers(
            .init(
                method: method, status: end.status, errorType: Self.errorType(end),
                protocolVersion: ClientMetrics.protocolVersion(end.httpVersion), operation: hop.operation))
        handlers.record(
            elapsed: Self.elapsed(from: hop.started, to: end.ended), requestBodySize: hop.requestBodySize,
            responseBodySize: end.responseBodySize, timings: end.timings)
        if end.receivePauses > 0 { server.streamPauses.increment(by: Int64(end.receivePauses)) }
    }

    static func elapsed(from start: UInt64, to end: UInt64) -> Int64 {
        Int64(clamping: end &- min(end, start))
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let attoseconds = duration.attoseconds
        // Below about 9 s the 64-bit division, which is a multiplication; beyond, the 128-bit one.
        if let small = Int64(exactly: attoseconds) { return small / 1_000_000_000 }
        return Int64(clamping: attoseconds / 1_000_000_000)
    }

    /// OpenTelemetry's `error.type`: the transport failure's code, else a status of 400 or more as a string.
    static func errorType(_ end: HopEnd) -> String? {
        if let error = end.error { return error.code.description }
        if let status = end.status, status >= 400 { return String(status) }
        return nil
    }
}
