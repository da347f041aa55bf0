// Curlew — where a session's metrics and spans go, and what they carry.

public import CoreMetrics
public import Tracing

/// Where a session's metrics and spans go.
///
/// Metrics follow OpenTelemetry's HTTP client semantic conventions (`http.client.request.duration` and
/// the others, listed in ``ClientMetricNames`` and in Curlew's "Observability and shutdown" article) and go to a swift-metrics factory; spans, one per
/// physical request (each attempt and each redirect hop), go to a swift-distributed-tracing tracer, which
/// also puts the trace context (`traceparent`) on each request.
///
/// By default both are the process's, as `MetricsSystem.bootstrap` and `InstrumentationSystem.bootstrap`
/// set them, read once when the session is created: bootstrap before creating sessions. A session whose
/// factory and tracer are the no-op ones records nothing and pays nothing per request.
public struct Telemetry: Sendable {
    /// The factory and tracer, boxed: a session's configuration is copied into every transfer, and one
    /// reference copies for less than two existentials.
    private final class Destinations: Sendable {
        let metricsFactory: (any MetricsFactory)?
        let tracer: (any Tracer)?

        init(metricsFactory: (any MetricsFactory)?, tracer: (any Tracer)?) {
            self.metricsFactory = metricsFactory
            self.tracer = tracer
        }
    }

    private var destinations: Destinations?

    /// The metrics factory; nil uses the process's (`MetricsSystem.factory`).
    public var metricsFactory: (any MetricsFactory)? {
        get { destinations?.metricsFactory }
        set { destinations = Destinations(metricsFactory: newValue, tracer: tracer) }
    }
    /// The tracer; nil uses the process's (`InstrumentationSystem.tracer`).
    public var tracer: (any Tracer)? {
        get { destinations?.tracer }
        set { destinations = Destinations(metricsFactory: metricsFactory, tracer: newValue) }
    }
    /// Whether metrics carry `url.scheme` (opt-in in the convention). Default true.
    public var recordsURLScheme = true
    /// Whether metrics are recorded at all. Default true.
    public var recordsMetrics = true
    /// Whether spans are made and trace context sent. Default true.
    public var recordsSpans = true

    /// Telemetry to the process's bootstrapped factory and tracer.
    public init() {}

    /// Telemetry to the given factory and tracer (nil: the process's).
    ///
    /// - Parameters:
    ///   - metricsFactory: Where metrics go; nil uses `MetricsSystem.factory`.
    ///   - tracer: Where spans go and which trace context is sent; nil uses `InstrumentationSystem.tracer`.
    public init(metricsFactory: (any MetricsFactory)?, tracer: (any Tracer)? = nil) {
        destinations = Destinations(metricsFactory: metricsFactory, tracer: tracer)
    }

    /// No metrics, no spans, no trace context sent.
    public static var disabled: Telemetry {
        var telemetry = Telemetry()
        telemetry.recordsMetrics = false
        telemetry.recordsSpans = false
        return telemetry
    }

    /// OpenTelemetry's recommended explicit bucket boundaries for `http.client.request.duration`, in
    /// seconds, for backends that take buckets per histogram (swift-metrics leaves buckets to them).
    public static let durationBuckets: [Double] = [
        0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
    ]
}
