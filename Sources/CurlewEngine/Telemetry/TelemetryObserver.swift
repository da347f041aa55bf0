// Curlew — telemetry as a hop observer: a CLIENT span per physical request with the trace context sent,
// OpenTelemetry's HTTP client metrics, and the request's own log lines.

import CoreMetrics
import HTTPTypes
import Instrumentation
import Logging
import Tracing

/// The session's telemetry: made once when the session is created, from ``Telemetry``; nil when there is
/// nothing to record (no metrics factory, no tracer, no instrument bootstrapped), so that requests then
/// pay nothing for it.
final class TelemetryObserver: HopObserver {
    let metrics: ClientMetrics?
    /// Where spans go and how context is sent; nil records no spans and sends no context.
    let tracing: Tracing?

    /// The tracer making spans, or an instrument that only propagates the caller's context
    /// (`InstrumentationSystem` bootstrapped with a plain instrument). A class: the hot path checks and
    /// passes one reference, not an existential.
    final class Tracing: Sendable {
        let tracer: (any Tracer)?
        let instrument: (any Instrument)?

        init(tracer: (any Tracer)?, instrument: (any Instrument)?) {
            self.tracer = tracer
            self.instrument = instrument
        }
    }

    init?(_ telemetry: Telemetry, urls: ParsedURLCache) {
        var metrics: ClientMetrics?
        if telemetry.recordsMetrics {
            let factory = telemetry.metricsFactory ?? MetricsSystem.factory
            if !(factory is NOOPMetricsHandler) {
                metrics = ClientMetrics(factory: factory, recordsURLScheme: telemetry.recordsURLScheme, urls: urls)
            }
        }
        var tracing: Tracing?
        if telemetry.recordsSpans {
            let chosen = telemetry.tracer ?? InstrumentationSystem.tracer
            if !(chosen is NoOpTracer) {
                tracing = Tracing(tracer: chosen, instrument: nil)
            } else if telemetry.tracer == nil, !(InstrumentationSystem.instrument is NoOpInstrument) {
                tracing = Tracing(tracer: nil, instrument: InstrumentationSystem.instrument)
            }
        }
        guard metrics != nil || tracing != nil else { return nil }
        self.metrics = metrics
        self.tracing = tracing
    }

    func starting(_ hop: HopStart) -> (any HopRecord)? {
        // Metrics alone: the server's record for the method, made once, serves every hop.
        let metrics = self.metrics?.server(hop.key).requests(hop.method.rawValue)
        metrics?.started()
        guard let tracing else { return metrics }
        let wallStart = WallInstant.now
        let parent = ServiceContext.current ?? .topLevel
        guard let tracer = tracing.tracer else {
            return TelemetryRecord(metrics: metrics, span: nil, propagated: (parent, tracing), wallStart: wallStart)
        }
        let span = tracer.startSpan(hop.method.rawValue, context: parent, ofKind: .client, at: wallStart)
        Self.describe(span, hop)
        return TelemetryRecord(metrics: metrics, span: span, propagated: (span.context, tracing), wallStart: wallStart)
    }

    /// The span's attributes known at the start.
    private static func describe(_ span: any Span, _ hop: HopStart) {
        span.attributes["http.request.method"] = hop.method.rawValue
        span.attributes["server.address"] = hop.host
        span.attributes["server.port"] = hop.port
        span.attributes["url.full"] = RedactedURL.full(hop.url)
        span.attributes["url.scheme"] = hop.scheme
        if hop.resendCount > 0 { span.attributes["http.request.resend_count"] = hop.resendCount }
        if let size = hop.requestBodySize { span.attributes["http.request.body.size"] = size }
        if let call = hop.call {
            span.attributes["curlew.request.id"] = String(call.id)
            if let operation = call.operation { span.attributes["curlew.operation"] = operation }
        }
    }
}

/// One hop's span (or the context sent for it) until it ends, with its server's metrics.
final class TelemetryRecord: HopRecord {
    private let metrics: MethodMetrics?
    private let span: (any Span)?
    /// The context sent with the request (the span's, or the caller's when only an instrument
    /// propagates), and how it is sent.
    private let propagated: (context: ServiceContext, tracing: TelemetryObserver.Tracing)?
    private let wallStart: WallInstant

    init(
        metrics: MethodMetrics?, span: (any Span)?, propagated: (context: ServiceContext, tracing: TelemetryObserver.Tracing)?,
        wallStart: WallInstant
    ) {
        self.metrics = metrics
        self.span = span
        self.propagated = propagated
        self.wallStart = wallStart
    }

    var injectsFields: Bool { propagated != nil }

    func inject(into fields: inout HTTPFields) {
        guard let (context, tracing) = propagated else { return }
        if let tracer = tracing.tracer {
            tracer.inject(context, into: &fields, using: HTTPFieldsInjector())
        } else if let instrument = tracing.instrument {
            instrument.inject(context, into: &fields, using: HTTPFieldsInjector())
        }
    }

    func ended(_ outcome: TransferOutcome, streamed: HopEnd?, hop: HopFacts) {
        let end = HopEnd(outcome, streamed: streamed)
        metrics?.ended(end, hop: hop)
        guard let span else { return }
        let elapsed = MethodMetrics.elapsed(from: hop.started, to: end.ended)
        if let status = end.status { span.attributes["http.response.status_code"] = status }
        if let version = ClientMetrics.protocolVersion(end.httpVersion) { span.attributes["network.protocol.version"] = version }
        if let size = end.responseBodySize { span.attributes["http.response.body.size"] = size }
        if let reused = end.connectionReused { span.attributes["curlew.connection.reused"] = reused }
        if let errorType = MethodMetrics.errorType(end) {
            span.attributes["error.type"] = errorType
            span.setStatus(SpanStatus(code: .error, message: end.error?.message))
        }
        if let timings = end.timings { addPhaseEvents(timings, to: span) }
        span.end(at: WallInstant(nanosecondsSinceEpoch: wallStart.nanosecondsSinceEpoch &+ UInt64(elapsed)))
    }

    /// The phases as span events at the times they ended: known only now, so stamped explicitly. The
    /// transfer's own clock starts after its time in the queue.
    private func addPhaseEvents(_ timings: TransferTimings, to span: any Span) {
        let transferStart = wallStart.nanosecondsSinceEpoch &+ UInt64(max(0, MethodMetrics.nanoseconds(timings.queued)))
        if timings.queued > .zero {
            span.addEvent(SpanEvent(name: "curlew.queued", at: WallInstant(nanosecondsSinceEpoch: transferStart)))
        }
        let phases = [timings.nameLookup, timings.connect, timings.tlsHandshake, timings.firstByte]
        for (index, phase) in phases.enumerated() where phase > .zero {
            let at = WallInstant(nanosecondsSinceEpoch: transferStart &+ UInt64(max(0, MethodMetrics.nanoseconds(phase))))
            span.addEvent(SpanEvent(name: Self.eventNames[index], at: at))
        }
    }

    private static let eventNames = ["curlew.dns", "curlew.connect", "curlew.tls", "curlew.first_byte"]
}

/// A wall-clock instant for spans and their events.
struct WallInstant: TracerInstant {
    let nanosecondsSinceEpoch: UInt64

    static var now: WallInstant { WallInstant(nanosecondsSinceEpoch: DefaultTracerClock.now.nanosecondsSinceEpoch) }

    static func < (lhs: WallInstant, rhs: WallInstant) -> Bool { lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch }
}

/// Puts trace-context fields on a request; a value that could not be sent as given is left out.
struct HTTPFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into fields: inout HTTPFields) {
        guard let name = HTTPField.Name(key), HeaderValidation.isSendable(value: value) else { return }
        fields[name] = value
    }
}
