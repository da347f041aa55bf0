// Curlew — where every physical request starts being observed: each hop handed to the loop, the first and
// every redirect, buffered or streamed, passes here once.

import HTTPTypes
import Logging

extension CurlSession {
    /// The session's metrics, for the counters the provider layer keeps (retries, refreshes); nil when
    /// it records none.
    package var clientMetrics: ClientMetrics? { (hopObserver as? TelemetryObserver)?.metrics }

    /// Whether anything sees the hops of `request`: the session's observer, or a logger at debug level.
    /// Nearly every request of a session that records nothing answers no, and is handed to the loop as
    /// it is.
    @inline(__always)
    func observesHops(of request: TransportRequest) -> Bool {
        hopObserver != nil || logsHops(of: request)
    }

    @inline(__always)
    private func logsHops(of request: TransportRequest) -> Bool {
        if let call = request.call { return call.logsHops }
        return logsHopsByDefault
    }

    /// Whether the session's requests get spans (a tracer records them), so that each call's context is
    /// worth making.
    package var recordsSpans: Bool { (hopObserver as? TelemetryObserver)?.tracing != nil }

    /// Starts observing a hop about to be handed to the loop (one ``observesHops(of:)`` answered yes for):
    /// the session's observer may add fields to `prepared` (trace context); the request's logger gets its
    /// lines when it logs at debug level.
    @inline(never)
    func startHop(_ prepared: inout PreparedRequest, submitted: UInt64) -> (any HopRecord)? {
        // The request's fields are read where they are: a copy of the request retains each of them.
        let call = prepared.request.call
        let hop = HopStart(
            method: prepared.request.method, url: prepared.request.url, key: prepared.url.poolKey,
            resendCount: (call?.attempt ?? 1) - 1 + prepared.request.redirectIndex,
            requestBodySize: prepared.request.body?.knownLength, call: call, started: submitted)
        var record: (any HopRecord)?
        if let hopObserver, let started = hopObserver.starting(hop) {
            if started.injectsFields {
                var fields = prepared.request.headerFields
                started.inject(into: &fields)
                prepared.replaceFields(fields)
            }
            record = started
        }
        guard logsHops(of: prepared.request) else { return record }
        let logger = prepared.request.logger(orElse: loop.logger)
        logger.debug(
            "sending request", metadata: ["http.request.resend_count": "\(hop.resendCount)"])
        return LoggedHop(logger: logger, started: submitted, inner: record)
    }
}

/// A hop whose end is logged, at debug level, to the request's logger.
final class LoggedHop: HopRecord {
    private let logger: Logger
    private let started: UInt64
    private let inner: (any HopRecord)?

    init(logger: Logger, started: UInt64, inner: (any HopRecord)?) {
        self.logger = logger
        self.started = started
        self.inner = inner
    }

    var injectsFields: Bool { inner?.injectsFields ?? false }

    func inject(into fields: inout HTTPFields) { inner?.inject(into: &fields) }

    func ended(_ outcome: TransferOutcome, streamed: HopEnd?, hop: HopFacts) {
        inner?.ended(outcome, streamed: streamed, hop: hop)
        let end = HopEnd(outcome, streamed: streamed)
        var metadata: Logger.Metadata = [
            "curlew.duration_ms": "\(Double(end.ended &- min(end.ended, started)) / 1_000_000)"
        ]
        if let status = end.status { metadata["http.response.status_code"] = "\(status)" }
        if let version = ClientMetrics.protocolVersion(end.httpVersion) { metadata["network.protocol.version"] = "\(version)" }
        if let error = end.error {
            metadata["error.type"] = "\(error.code.description)"
            logger.debug("request failed: \(error.message)", metadata: metadata)
        } else {
            logger.debug("request finished", metadata: metadata)
        }
    }
}
