// Curlew — what one provider call asks of its stages: its endpoint, and how its response is taken.

/// How a provider call takes its response.
enum CallKind: Sendable {
    /// The whole body in memory, or in the download destination of a download task (`request`,
    /// `result(for:)`, `progress(for:)`).
    case collect
    /// The body read as it arrives by the caller's handler (`stream`).
    case stream
    /// One connection attempt of an event stream (`events`): its request asks for the stream and resumes
    /// after `lastEventID`; `replaying`: the first attempt's request is sent again, so its body must be
    /// one that can be.
    // Boxed: every call copies its kind, and only event streams carry one this large.
    indirect case eventStream(attempt: Int, lastEventID: String, policy: EventStreamPolicy, replaying: Bool)
}

/// One call's endpoint and kind, as ``Provider/attempt(_:_:receive:)`` runs it for its target. Not
/// generic over the target: a generic value's type would be looked up at run time on every call.
struct ProviderCall: Sendable {
    let endpoint: Endpoint
    let kind: CallKind
    /// Reports the transfer's progress (`progress(for:)`).
    var progress: ProgressReporter?

    init(_ endpoint: Endpoint, _ kind: CallKind, progress: ProgressReporter? = nil) {
        self.endpoint = endpoint
        self.kind = kind
        self.progress = progress
    }

    /// The connection attempt an event stream's call is (0 for every other call).
    var reconnection: Int {
        if case .eventStream(let attempt, _, _, _) = kind { return attempt }
        return 0
    }
}
