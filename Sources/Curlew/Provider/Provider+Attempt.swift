// Curlew — the one path from a target to the transport: every call (collect, download, stream, an event
// stream's attempt, with or without progress) runs the provider's stages here, once.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

extension Provider {
    /// Runs a call's stages once, in order: the request closure and plugins' `prepare`, the call's own
    /// request fields (progress, a download's resume range, an event stream's), plugins' `willSend`,
    /// the middleware chain and the transport (or the stub), the response as the call takes it,
    /// validation by the target's `validationType`, plugins' `didReceive` and `process`; then `receive`
    /// with the response and, for a streamed response, its body (nil: the body is the response's data),
    /// inside the exchange's scope.
    ///
    /// An empty chain is one call to the transport: a collected response is the transport's own, with
    /// nothing in between. A failure anywhere before the plugins' `didReceive` reaches them; a response a
    /// plugin makes of it is handed to `receive`. A failure after them (validation, a plugin) and what
    /// `receive` throws go through the chain as they are, and no plugin sees them again. A `receive` that
    /// returns without ending a streamed body ends the transfer, unless it detached the body (an event
    /// stream's attempt).
    ///
    /// - Throws: ``CurlewError``, mapped once: where a stage outside the provider layer threw it (the
    ///   request closure and plugins here, the transport at the chain's end).
    // Out of line: the other calls keep one frame for the path; `request(_:)` inlines it (`run`).
    @inline(never)
    nonisolated(nonsending) func attempt<Return>(
        _ target: Target, _ call: ProviderCall,
        receive: (ApiResponse, ResponseBodyStream?) async throws(CurlewError) -> Return
    ) async throws(CurlewError) -> Return {
        try await run(target, call, receive: receive)
    }

    /// ``attempt(_:_:receive:)``'s body, inlined into `request(_:)`, the most common call: its frame then
    /// holds the path, and `receive` is inlined too, with no frames of their own.
    @inline(__always)
    nonisolated(nonsending) func run<Return>(
        _ target: Target, _ call: ProviderCall,
        receive: (ApiResponse, ResponseBodyStream?) async throws(CurlewError) -> Return
    ) async throws(CurlewError) -> Return {
        let validation = target.validationType
        // Set once the plugins are about to see a response: a failure after that is not shown them again.
        var seen = false
        var download: DownloadReceiver?
        let result: Return
        do throws(CurlewError) {
            // The request closure and plugins' `prepare`. Here, not in a function returning the request: one
            // returned into another variable of an async function is copied, then destroyed.
            var request: TransportRequest
            do {
                // The default closure called directly: through the stored closure, each request paid its
                // reabstraction thunks' async frames (about 800 instructions).
                request = requestsByDefault ? try call.endpoint.urlRequest() : try await requestClosure(call.endpoint)
                // Before the plugins: they log through `request.logger`, with the call's id. Made only when
                // someone can see it.
                if observesCalls || logsCalls || !plugins.isEmpty || !members.isEmpty {
                    Self.attach(CallContext(logger: logger), to: &request)
                }
                if !plugins.isEmpty {
                    for plugin in plugins { request = try await plugin.prepare(request, target: target) }
                }
            } catch {
                throw CurlewError(mapping: error, url: call.endpoint.url)
            }
            try Self.complete(&request, for: call)
            var collects = false
            if case .collect = call.kind {
                if call.endpoint.taskShape == .download, let destination = call.endpoint.task.downloadDestination {
                    // A download asks for the rest of a partial file: plugins see those fields too.
                    let receiver = DownloadReceiver(request, destination: destination, options: target.downloadOptions)
                    download = receiver
                    request = receiver.request
                } else {
                    collects = true
                }
            }
            let stub = stubClosure(target)
            if !plugins.isEmpty { await announce(request, target: target, stub: stub, collects: collects) }
            if members.isEmpty, stub == .never, collects {
                let response = try await collect(request)
                seen = true
                // Its last use: moved into the response rather than copied.
                let taken = ApiResponse(response, request: consume request)
                result = try await settle(taken, nil, target: target, validation: validation, receive: receive)
            } else {
                result = try await exchange(
                    request, target: target, call: call, collects: collects, stub: stub, download: download,
                    validation: validation, seen: &seen, receive: receive)
            }
        } catch {
            // Validation's and the plugins' failures (which the plugins saw), and what `receive` threw, as
            // they are.
            if seen {
                download?.discardKept()
                throw error
            }
            return try await recover(error, target: target, download: download, receive: receive)
        }
        download?.discardKept()
        return result
    }

    /// The middleware chain (or the stub) and the response as the call takes it, then `settle`.
    // A function of its own, inlined: a request the chain's closure captured could not be moved into the
    // response on the other path.
    @inline(__always)
    private nonisolated(nonsending) func exchange<Return>(
        _ request: TransportRequest, target: Target, call: ProviderCall, collects: Bool, stub: StubBehavior,
        download: DownloadReceiver?, validation: ValidationType, seen: inout Bool,
        receive: (ApiResponse, ResponseBodyStream?) async throws(CurlewError) -> Return
    ) async throws(CurlewError) -> Return {
        var context = MiddlewareContext(
            target: target, endpoint: call.endpoint, logger: logger, collectsBody: collects, stub: stub,
            request: request, metrics: clientMetrics)
        context.reconnection = call.reconnection
        let chain = MiddlewareNext(members: members, index: 0, transport: session)
        return try await chain(request, context) { head, body throws(CurlewError) in
            let taken = try await Self.response(
                of: head, body: body, request: request, kind: call.kind, download: download,
                validation: validation, sample: stub != .never)
            seen = true
            return try await settle(taken, body, target: target, validation: validation, receive: receive)
        }
    }

    /// Plugins' `willSend` with the request as it goes on the wire, with the fields the transport adds (a
    /// stub sends nothing).
    // Out of line, as `recover` is (neither runs on the common path): an async function's frame holds every
    // value any of its paths keeps across a wait, and an event stream's attempt waits for its head with
    // `attempt`'s frame allocated.
    @inline(never)
    private nonisolated(nonsending) func announce(_ request: TransportRequest, target: Target, stub: StubBehavior, collects: Bool) async {
        let shown: TransportRequest
        if stub != .never {
            shown = request
        } else if collects {
            shown = await session.wireRequest(for: request)
        } else {
            shown = await session.wireRequest(forStreamed: request)
        }
        for plugin in plugins { await plugin.willSend(shown, target: target) }
    }

    /// A failure before the plugins saw a response: they see it, and a response one of them makes of it
    /// goes to `receive`.
    @inline(never)
    private nonisolated(nonsending) func recover<Return>(
        _ error: CurlewError, target: Target, download: DownloadReceiver?,
        receive: (ApiResponse, ResponseBodyStream?) async throws(CurlewError) -> Return
    ) async throws(CurlewError) -> Return {
        var error = error
        if let download {
            // A middleware may have tried more than once: settle the partial files earlier attempts kept.
            // Only a transport failure can report one; otherwise it would be left where nobody knows of it.
            if case .transport(let failure) = error {
                error = .transport(download.reportingKept(in: failure))
            } else {
                download.discardKept()
            }
        }
        let response = try await finishing(.failure(error), target: target).get()
        return try await receive(response, nil)
    }

    /// Validation and the plugins on the response a call took, then `receive` with it (and, for a streamed
    /// response, its body).
    // A method, not a local function: one that captured the call's state would box it on the heap.
    @inline(__always)
    private nonisolated(nonsending) func settle<Return>(
        _ taken: ApiResponse, _ body: ResponseBodyStream?, target: Target, validation: ValidationType,
        receive: (ApiResponse, ResponseBodyStream?) async throws(CurlewError) -> Return
    ) async throws(CurlewError) -> Return {
        var result = Self.validate(.success(taken), validation: validation)
        if !plugins.isEmpty { result = await finishing(result, target: target) }
        let response = try result.get()
        return try await receive(response, response.origin == .streamedHead ? body : nil)
    }

    /// The transport's complete response: an empty chain's whole exchange, as `MiddlewareNext.collect`
    /// makes it, but calling a ``/CurlewEngine/CurlSession`` directly.
    @inline(__always)
    private nonisolated(nonsending) func collect(_ request: TransportRequest) async throws(CurlewError) -> TransportResponse {
        guard let curlSession else { return try await MiddlewareNext.collect(request, transport: session) }
        do {
            return try await curlSession.execute(request)
        } catch {
            throw CurlewError(error)
        }
    }

    /// Sets the request's call context.
    // Through `inout`: a field set directly on `attempt`'s request would keep it from being moved into the
    // response (the compiler then refuses `consume` on it).
    static func attach(_ call: CallContext, to request: inout TransportRequest) {
        request.call = call
    }

    /// The call's own fields on the prepared request (progress, an event stream's), once the calling task
    /// is known not to be cancelled: the request the chain is given.
    // In place: a request moved between an async function's variables is copied, then destroyed.
    @inline(__always)
    static func complete(_ request: inout TransportRequest, for call: ProviderCall) throws(CurlewError) {
        if Task.isCancelled { throw .transport(.cancelled(request)) }
        if let progress = call.progress { request.options.progressReporter = progress }
        if case .eventStream(_, let lastEventID, let policy, let replaying) = call.kind {
            if replaying, let body = request.body, !body.isReplayable { throw .eventStream(.bodyNotReplayable) }
            request = EventStreamRequest.prepare(request, lastEventID: lastEventID, policy: policy)
        }
    }

    /// The response as the call takes it: the whole body (in memory, or a download's file; a status the
    /// target's validation refuses is read into memory and never replaces the destination), or the head
    /// of a body read as it arrives.
    @inline(__always)
    private nonisolated(nonsending) static func response(
        of head: ResponseHead, body: ResponseBodyStream, request: TransportRequest, kind: CallKind,
        download: DownloadReceiver?, validation: ValidationType, sample: Bool
    ) async throws(CurlewError) -> ApiResponse {
        switch kind {
        case .stream, .eventStream:
            return ApiResponse(head: head, request: request, fromNetwork: !sample)
        case .collect:
            if let download, validation.accepts(head.status.code) {
                do throws(TransportError) {
                    return ApiResponse(download: try await download.receive(head, body), request: request, fromNetwork: !sample)
                } catch {
                    throw CurlewError(error)
                }
            }
            let response = try await body.completeResponse(head: head)
            if sample {
                return ApiResponse(statusCode: response.status.code, data: response.body, request: request, headerFields: response.headerFields)
            }
            return ApiResponse(response, request: request)
        }
    }

    /// Runs the plugins' `didReceive` and `process` on `result`.
    nonisolated(nonsending) func finishing(
        _ result: Result<ApiResponse, CurlewError>, target: Target
    ) async -> Result<ApiResponse, CurlewError> {
        var result = result
        for plugin in plugins { await plugin.didReceive(result, target: target) }
        for plugin in plugins { result = await plugin.process(result, target: target) }
        return result
    }

    /// Applies the target's validation: a status it does not accept fails, keeping the response reachable.
    static func validate(_ result: Result<ApiResponse, CurlewError>, validation: ValidationType) -> Result<ApiResponse, CurlewError> {
        guard case .success(let response) = result, !validation.accepts(response.statusCode) else {
            return result
        }
        return .failure(.statusCode(response))
    }
}
