// Curlew — a target's server-sent events: each connection attempt through the provider's one path
// (`Provider+Attempt.swift`), its body detached and read, and its events parsed, by the reading task.

import CurlewJSON
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Provider {
    /// The server-sent events of `target`, reconnecting after the stream ends or its connection fails
    /// as the WHATWG specification says.
    ///
    /// Every connection attempt runs the stages of ``stream(_:isolation:_:)``: endpoint and request
    /// closures, plugins' `prepare` and `willSend` (they see each attempt's request, `Last-Event-ID`
    /// included), the middleware (``MiddlewareContext/reconnection`` tells the attempt; ``RetryMiddleware``
    /// leaves reconnections to the stream), and the plugins' `didReceive` and `process` on each head.
    /// The requests ask for `text/event-stream` and no caching. A stubbed target's sample data is read
    /// as one stream that does not reconnect.
    ///
    /// ```swift
    /// for try await event in provider.events(for: .changes(since: cursor)) {
    ///     try await apply(event.data, id: event.id)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - target: The first attempt's target.
    ///   - lastEventID: The id to resume after ("" for none).
    ///   - policy: How the stream reconnects and what it tolerates.
    ///   - reconnectTarget: The target of each later attempt, given the last event id (a stream that
    ///     resumes with a `GET`, as MCP's does); nil sends `target` again, whose body must then be one
    ///     that can be sent again.
    public nonisolated func events(
        for target: Target, lastEventID: String = "", policy: EventStreamPolicy = .default,
        reconnectTarget: (@Sendable (_ lastEventID: String) -> Target)? = nil
    ) -> TargetEvents {
        TargetEvents(
            connector: eventConnector(for: target, policy: policy, reconnectTarget: reconnectTarget, attempts: nil),
            policy: policy, lastEventID: lastEventID)
    }

    /// The server-sent events of `target` with each event's data decoded from JSON as `Value`; see
    /// ``events(for:lastEventID:policy:reconnectTarget:)``.
    ///
    /// An event whose data does not decode is handed over with a failed ``DecodedEvent/result`` and the
    /// stream goes on (`undecodable: .report`, the default: an LLM stream's closing `[DONE]`, say), or
    /// ends the stream by throwing (`.fail`).
    ///
    /// - Parameters:
    ///   - target: The first attempt's target.
    ///   - type: The type each event's data decodes to.
    ///   - decoder: Decodes each event's data; nil uses the provider's.
    ///   - lastEventID: The id to resume after ("" for none).
    ///   - policy: How the stream reconnects and what it tolerates.
    ///   - undecodable: What happens to an event whose data does not decode.
    ///   - reconnectTarget: The target of each later attempt, given the last event id; nil sends `target`
    ///     again.
    public nonisolated func events<Value: Decodable & Sendable>(
        for target: Target, as type: Value.Type, decoder: JSONDecoder? = nil, lastEventID: String = "",
        policy: EventStreamPolicy = .default, undecodable: UndecodableEvents = .report,
        reconnectTarget: (@Sendable (_ lastEventID: String) -> Target)? = nil
    ) -> DecodedTargetEvents<Value> {
        let attempts = EventStreamAttempts()
        return DecodedTargetEvents(
            events: TargetEvents(
                connector: eventConnector(
                    for: target, policy: policy, reconnectTarget: reconnectTarget, attempts: attempts),
                policy: policy, lastEventID: lastEventID),
            decoder: decoder.map(JSONBodyDecoder.init) ?? bodyDecoder, undecodable: undecodable, attempts: attempts)
    }

    /// Opens a target's connection attempts through the provider's one path.
    private nonisolated func eventConnector(
        for target: Target, policy: EventStreamPolicy, reconnectTarget: (@Sendable (String) -> Target)?,
        attempts: EventStreamAttempts?
    ) -> EventStreamConnector {
        EventStreamConnector(
            mayReconnect: stubClosure(target) == .never,
            transportError: { error in
                if case .transport(let transport) = error as? CurlewError { return transport }
                return error as? TransportError
            },
            direct: directAttempts(for: target, policy: policy, reconnectTarget: reconnectTarget),
            sawDirectHead: attempts.map(Self.recorder(of:)),
            connect: { [self] attempt, lastEventID in
                let (target, call) = attemptCall(
                    target, attempt: attempt, lastEventID: lastEventID, policy: policy, reconnectTarget: reconnectTarget)
                return try await connect(target, call, attempts: attempts)
            })
    }

    /// Attempt `attempt`'s target (the reconnect target's after the first, when there is one) and call.
    private nonisolated func attemptCall(
        _ target: Target, attempt: Int, lastEventID: String, policy: EventStreamPolicy,
        reconnectTarget: (@Sendable (String) -> Target)?
    ) -> (Target, ProviderCall) {
        let target = attempt == 0 ? target : reconnectTarget?(lastEventID) ?? target
        let replaying = attempt > 0 && reconnectTarget == nil
        let kind = CallKind.eventStream(attempt: attempt, lastEventID: lastEventID, policy: policy, replaying: replaying)
        return (target, ProviderCall(endpointClosure(target), kind))
    }

    /// Records each direct attempt's head and request in `attempts`, for a typed stream's undecodable events.
    private static func recorder(of attempts: EventStreamAttempts) -> @Sendable (ResponseHead, TransportRequest) -> Void {
        { head, request in attempts.set(head: head, request: request) }
    }

    /// Starts each attempt on the reading task, as a session's event stream does, when none of the
    /// provider's stages waits: the default request closure, no plugins, no middleware (nil otherwise).
    /// An attempt whose target is stubbed or validated, or whose request the session cannot start so
    /// (a streamed body), goes through ``connect(_:_:attempts:)``.
    ///
    /// The same stages as ``attempt(_:_:receive:)``'s with nothing to wait for, and no task: an idle
    /// stream then holds what a session's does, where a task running the stages until the head left its
    /// frames' pages resident after it ended (sse-10k-h1 in BENCHMARKS.md).
    private nonisolated func directAttempts(
        for target: Target, policy: EventStreamPolicy, reconnectTarget: (@Sendable (String) -> Target)?
    ) -> (@Sendable (Int, String) throws -> sending EventStreamExchange?)? {
        guard let curlSession, requestsByDefault, plugins.isEmpty, members.isEmpty else { return nil }
        return { [self] attempt, lastEventID in
            let (target, call) = attemptCall(
                target, attempt: attempt, lastEventID: lastEventID, policy: policy, reconnectTarget: reconnectTarget)
            guard stubClosure(target) == .never, target.validationType == .none else { return nil }
            var request: TransportRequest
            do {
                request = try call.endpoint.urlRequest()
            } catch {
                throw CurlewError(mapping: error, url: call.endpoint.url)
            }
            if observesCalls || logsCalls { Self.attach(CallContext(logger: logger), to: &request) }
            try Self.complete(&request, for: call)
            // A transport failure as a session's stream has it: the stream decides on it, and its iterator
            // maps what it throws once.
            return try curlSession.startEventStream(request)
        }
    }

    /// One connection attempt: the provider's stages to the head (the plugins see it), then the head and
    /// the body, detached from the exchange's scope, for the reader to read on its own task.
    private nonisolated func connect(
        _ target: Target, _ call: ProviderCall, attempts: EventStreamAttempts?
    ) async throws(CurlewError) -> OpenedAttempt {
        try await self.attempt(target, call) { response, body throws(CurlewError) in
            var head = response.transportResponse.map(ResponseHead.init)
                ?? ResponseHead(status: .init(code: response.statusCode), headerFields: response.headerFields)
            // A sample's data is an event stream whatever type its sample response names.
            if response.transportResponse == nil, head.status.code == 200, head.headerFields[.contentType] == nil {
                head.headerFields[.contentType] = "text/event-stream"
            }
            if let request = response.request { attempts?.set(head: head, request: request) }
            do throws(TransportError) {
                return OpenedAttempt(head: head, body: try (body ?? ResponseBodyStream(data: response.data)).detach())
            } catch {
                throw CurlewError(error)
            }
        }
    }
}

/// The head and request of an event stream's running attempt, for the response an undecodable event
/// reports. Written by the attempt's task, read by the reading task.
final class EventStreamAttempts: Sendable {
    private let latest = Locked<(head: ResponseHead, request: TransportRequest)?>(nil)

    func set(head: ResponseHead, request: TransportRequest) {
        latest.withLock { $0 = (head, request) }
    }

    /// A response carrying `data` as its body, with the running attempt's status and fields.
    func response(with data: Data) -> ApiResponse {
        guard let (head, request) = latest.withLock({ $0 }) else { return ApiResponse(statusCode: 200, data: data) }
        return ApiResponse(statusCode: head.status.code, data: data, request: request, headerFields: head.headerFields)
    }
}
