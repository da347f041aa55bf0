// Curlew — the one hook every physical request passes: each attempt and each redirect hop, as it goes on
// the wire and as it ends. Telemetry (metrics, spans, trace context, per-request log lines) is one observer.

import HTTPTypes

/// Sees each request the engine puts on the wire (every attempt a middleware makes, every redirect hop),
/// once as it starts and once as it ends.
///
/// Called on the task that sends the hop, before its header fields are final: an observer may add fields
/// (trace context). What it returns is told how the hop ended, exactly once, on whichever thread ended
/// it (the loop thread for a completed transfer), and must not block.
package protocol HopObserver: AnyObject, Sendable {
    /// A hop is about to be sent.
    func starting(_ hop: HopStart) -> (any HopRecord)?
}

/// What an observer keeps of one hop until it ends.
package protocol HopRecord: AnyObject, Sendable {
    /// Whether ``inject(into:)`` adds fields to the hop's request.
    var injectsFields: Bool { get }
    /// Adds fields to the hop's request (trace context), before it is sent.
    func inject(into fields: inout HTTPFields)
    /// The hop ended: completed (with a status), or failed, or was never sent. `streamed` is what the
    /// loop knew of a streamed response (see ``HopEnd/init(_:streamed:)``); `hop` what the engine kept of
    /// the hop's start (a record may serve many hops: it need not keep them).
    func ended(_ outcome: TransferOutcome, streamed: HopEnd?, hop: HopFacts)
}

/// What the engine keeps of a hop's start for its end.
package struct HopFacts: Sendable {
    /// When the hop was handed to the engine (monotonic nanoseconds).
    package let started: UInt64
    /// The bytes of the request body, when known before sending.
    package let requestBodySize: Int?
    /// The operation the call named (``CallContext/operation``), which the request metrics carry.
    package let operation: String?
}

/// A physical request as it starts.
package struct HopStart: Sendable {
    package let method: HTTPRequest.Method
    /// The URL as given (its user information and query values are for the observer to redact).
    package let url: String
    /// The hop's pool key: its server.
    let key: PoolKey
    package var scheme: String { key.scheme }
    /// The host as `server.address` names it (an IPv6 literal without brackets).
    package var host: String { key.serverAddress }
    package var port: Int { key.port }
    /// How many times the request was sent before, for any reason: earlier attempts (a retry, a replay
    /// after a new credential) and redirect hops.
    package let resendCount: Int
    /// The bytes of the request body, when known before sending.
    package let requestBodySize: Int?
    /// The call the request belongs to: its logger, request id, attempt and operation.
    package let call: CallContext?
    /// When the hop was handed to the engine (monotonic nanoseconds).
    package let started: UInt64
}

/// How a physical request ended.
package struct HopEnd: Sendable {
    /// The final status, when a response head arrived.
    package var status: Int?
    package var httpVersion: ResponseHead.HTTPVersion?
    /// The failure, when the hop failed (after its head, for a streamed body that broke).
    package var error: TransportError?
    /// curl's phase timings, when the transfer ran.
    package var timings: TransferTimings?
    /// The bytes of the response body received (decoded).
    package var responseBodySize: Int?
    package var connectionReused: Bool?
    /// How many times a streamed response paused because its reader was behind.
    package var receivePauses = 0
    /// When the hop ended (monotonic nanoseconds).
    package var ended: UInt64

    /// The end a transfer's outcome tells; `streamed` carries what the loop knew of a streamed response.
    package init(_ outcome: TransferOutcome, streamed: HopEnd?) {
        switch outcome {
        case .success(let response):
            self.init(
                status: response.status.code, httpVersion: response.httpVersion, error: nil, timings: response.timings,
                responseBodySize: response.body.count, connectionReused: response.connectionReused,
                ended: MonotonicClock.now())
        case .failure(let error):
            self = streamed ?? HopEnd(ended: MonotonicClock.now())
            self.error = error
        case .streamed:
            self = streamed ?? HopEnd(ended: MonotonicClock.now())
        }
    }

    package init(
        status: Int? = nil, httpVersion: ResponseHead.HTTPVersion? = nil, error: TransportError? = nil, timings: TransferTimings? = nil,
        responseBodySize: Int? = nil, connectionReused: Bool? = nil, receivePauses: Int = 0, ended: UInt64
    ) {
        self.receivePauses = receivePauses
        self.status = status
        self.httpVersion = httpVersion
        self.error = error
        self.timings = timings
        self.responseBodySize = responseBodySize
        self.connectionReused = connectionReused
        self.ended = ended
    }
}
