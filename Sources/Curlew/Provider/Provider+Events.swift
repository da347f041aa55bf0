// Curlew — a target's server-sent events: each connection attempt through the provider's stages and
// middleware, the events parsed on the reading task.

import CurlewJSON
import HTTPTypes
import Synchronization

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

    /// Opens a target's connection attempts through the provider's stages.
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
            connect: { [self] attempt, lastEventID, receive in
                let target = attempt == 0 ? target : reconnectTarget?(lastEventID) ?? target
                try await connect(
                    target, attempt: attempt, lastEventID: lastEventID, policy: policy, replaying: attempt > 0 && reconnectTarget == nil,
                    attempts: attempts, receive: receive)
            })
    }

    /// One connection attempt: the request built and sent through the chain, the head through the
    /// plugins, then `receive` with the head and body.
    ///
    /// The attempt's request and context are kept in one object, and the head's stages run in a
    /// function of their own: the frames around `receive` stay allocated while the stream is open.
    private nonisolated func connect(
        _ target: Target, attempt: Int, lastEventID: String, policy: EventStreamPolicy, replaying: Bool,
        attempts: EventStreamAttempts?, receive: EventStreamConnector.Receive
    ) async throws {
        let sending = try await prepareAttempt(
            target, attempt: attempt, lastEventID: lastEventID, policy: policy, replaying: replaying)
        var headArrived = false
        do throws(CurlewError) {
            let chain = MiddlewareNext(members: members, index: 0, transport: session)
            try await chain(sending.request, sending.context) { head, body throws(CurlewError) in
                headArrived = true
                let (head, body) = try await accept(head, body: body, of: sending, target: target, attempts: attempts)
                do {
                    try await receive(head, body)
                } catch {
                    throw .underlying(HandlerFailure(error: error), nil)
                }
            }
        } catch {
            if case .underlying(let failure as HandlerFailure, _) = error { throw failure.error }
            guard !headArrived else { throw error }
            throw await finish(.failure(error), target: target)
        }
    }

    /// An attempt's request and middleware context, once built.
    private final class AttemptRequest: Sendable {
        let request: TransportRequest
        let context: MiddlewareContext
        let stub: StubBehavior

        init(request: TransportRequest, context: MiddlewareContext, stub: StubBehavior) {
            self.request = request
            self.context = context
            self.stub = stub
        }
    }

    /// Builds an attempt's request (endpoint, request closure, the event-stream fields) and shows it to
    /// the plugins.
    @inline(never)
    private nonisolated func prepareAttempt(
        _ target: Target, attempt: Int, lastEventID: String, policy: EventStreamPolicy, replaying: Bool
    ) async throws -> AttemptRequest {
        let endpoint = endpointClosure(target)
        var request: TransportRequest
        switch await prepareRequest(endpoint, target: target) {
        case .success(let prepared):
            request = prepared
        case .failure(let error):
            throw await finish(.failure(error), target: target)
        }
        if replaying, let body = request.body, !body.isReplayable {
            throw await finish(.failure(.eventStream(.bodyNotReplayable)), target: target)
        }
        request = EventStreamRequest.prepare(request, lastEventID: lastEventID, policy: policy)
        let stub = stubClosure(target)
        if !plugins.isEmpty {
            let shown = stub == .never ? await session.wireRequest(forStreamed: request) : request
            for plugin in plugins { await plugin.willSend(shown, target: target) }
        }
        var context = MiddlewareContext(target: target, endpoint: endpoint, logger: logger, collectsBody: false, stub: stub)
        context.reconnection = attempt
        return AttemptRequest(request: request, context: context, stub: stub)
    }

    /// Runs an attempt's head through the plugins and validation; returns the head and body to read.
    @inline(never)
    private nonisolated func accept(
        _ head: ResponseHead, body: ResponseBody, of sending: AttemptRequest, target: Target,
        attempts: EventStreamAttempts?
    ) async throws(CurlewError) -> (ResponseHead, ResponseBody) {
        var head = head
        // A stub's sample data is an event stream whatever type its sample response names.
        if sending.stub != .never, head.status.code == 200, head.headerFields[.contentType] == nil {
            head.headerFields[.contentType] = "text/event-stream"
        }
        let response = try await finishing(.success(ApiResponse(head: head, request: sending.request)), target: target).get()
        attempts?.set(head: head, request: sending.request)
        return (head, response.isStreamed ? body : ResponseBody(data: response.data))
    }
}

/// The head and request of an event stream's running attempt, for the response an undecodable event
/// reports. Written by the attempt's task, read by the reading task.
final class EventStreamAttempts: Sendable {
    private let latest = Mutex<(head: ResponseHead, request: TransportRequest)?>(nil)

    func set(head: ResponseHead, request: TransportRequest) {
        latest.withLock { $0 = (head, request) }
    }

    /// A response carrying `data` as its body, with the running attempt's status and fields.
    func response(with data: Data) -> ApiResponse {
        guard let (head, request) = latest.withLock({ $0 }) else { return ApiResponse(statusCode: 200, data: data) }
        return ApiResponse(statusCode: head.status.code, data: data, request: request, headerFields: head.headerFields)
    }
}
