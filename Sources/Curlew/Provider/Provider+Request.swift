// Curlew — a request's journey: endpoint, request, plugins, the middleware chain and the transport,
// validation, plugins.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Provider {
    /// Sends the request for `target` and returns its response.
    ///
    /// The stages run in order: endpoint closure, request closure, plugins' `prepare`, plugins'
    /// `willSend`, the middleware chain (``middleware``, in-flight sharing, the stub responder) and the
    /// transport, validation by the target's `validationType`, plugins' `didReceive`, plugins' `process`.
    /// None of them runs on the provider's actor.
    ///
    /// Cancelling the calling task cancels the transfer, a delayed stub, a middleware's wait or a
    /// request closure still running; the call then throws ``CurlewError/transport(_:)`` with
    /// ``/CurlewEngine/TransportError/Code/cancelled``, and plugins' `didReceive` sees that failure first.
    ///
    /// - Throws: ``CurlewError``.
    @concurrent
    public nonisolated func request(_ target: Target) async throws(CurlewError) -> ApiResponse {
        let endpoint = endpointClosure(target)
        let result = await send(endpoint, target: target)
        return try result.get()
    }

    /// Sends the request for `target` and returns its outcome as a `Result`, never throwing: for code that
    /// switches on success and failure, as Moya's completion closures do.
    ///
    /// ```swift
    /// switch await provider.result(for: .zen) {
    /// case .success(let response): logger.info("zen: \(response.statusCode)")
    /// case .failure(let error): logger.error("zen failed: \(error)")
    /// }
    /// ```
    @concurrent
    public nonisolated func result(for target: Target) async -> Result<ApiResponse, CurlewError> {
        await send(endpointClosure(target), target: target)
    }

    /// The endpoint the provider's endpoint closure makes for `target` (Moya's `endpoint(_:)`).
    public nonisolated func endpoint(_ target: Target) -> Endpoint {
        endpointClosure(target)
    }

    nonisolated func send(
        _ endpoint: Endpoint, target: Target, progress: ProgressReporter? = nil
    ) async -> Result<ApiResponse, CurlewError> {
        var result: Result<ApiResponse, CurlewError>
        switch await prepareRequest(endpoint, target: target) {
        case .failure(let error):
            result = .failure(error)
        case .success(var request):
            if let progress { request.options.progressReporter = progress }
            let stub = stubClosure(target)
            // A download asks for the rest of a partial file: plugins see those fields too.
            let download = endpoint.task.downloadDestination.map { destination in
                DownloadReceiver(request, destination: destination, options: target.downloadOptions)
            }
            if let download { request = download.request }
            if !plugins.isEmpty {
                // Plugins see what goes on the wire, with the fields the transport adds; a stub sends nothing.
                let shown = stub == .never ? await session.wireRequest(for: request) : request
                for plugin in plugins { await plugin.willSend(shown, target: target) }
            }
            if let download {
                result = await exchange(download, endpoint: endpoint, target: target, stub: stub)
            } else {
                result = await exchange(request, endpoint: endpoint, target: target, stub: stub)
            }
            result = Self.validate(result, codes: target.validationType.statusCodes)
        }
        for plugin in plugins { await plugin.didReceive(result, target: target) }
        for plugin in plugins { result = await plugin.process(result, target: target) }
        return result
    }

    /// Runs the request closure and the plugins' `prepare`, turning their failures into CurlewError.
    nonisolated func prepareRequest(
        _ endpoint: Endpoint, target: Target
    ) async -> Result<TransportRequest, CurlewError> {
        do {
            var request = try await requestClosure(endpoint)
            for plugin in plugins { request = try await plugin.prepare(request, target: target) }
            if Task.isCancelled { return .failure(.transport(.cancelled(request))) }
            return .success(request)
        } catch let error as CurlewError {
            return .failure(error)
        } catch let error as TransportError {
            return .failure(.transport(error))
        } catch is CancellationError {
            return .failure(.transport(TransportError(.cancelled, message: "the task was cancelled", url: endpoint.url)))
        } catch {
            if Task.isCancelled {
                return .failure(.transport(TransportError(.cancelled, message: "the task was cancelled", url: endpoint.url)))
            }
            return .failure(.underlying(error, nil))
        }
    }

    /// The exchange for a buffered call, through the chain. With no middleware, no sharing and no stub
    /// the chain is the transport alone, called directly.
    private nonisolated func exchange(
        _ request: TransportRequest, endpoint: Endpoint, target: Target, stub: StubBehavior
    ) async -> Result<ApiResponse, CurlewError> {
        if stub == .never && members.count == 1 {
            do throws(TransportError) {
                return .success(ApiResponse(try await session.execute(request), request: request))
            } catch {
                return .failure(CurlewError(error))
            }
        }
        let context = MiddlewareContext(
            target: target, endpoint: endpoint, logger: logger, collectsBody: true, stub: stub)
        do throws(CurlewError) {
            let chain = MiddlewareNext(members: members, index: 0, transport: session)
            return .success(
                try await chain(request, context) { head, body throws(CurlewError) in
                    try await ApiResponse(head: head, body: body, request: request)
                })
        } catch {
            return .failure(error)
        }
    }

    /// The exchange for a download task, through the chain: the calling task writes the final response's
    /// body to the file (a stub's sample data too), which is moved into place before this returns. A status
    /// the target's validation refuses is kept in memory instead.
    private nonisolated func exchange(
        _ download: DownloadReceiver, endpoint: Endpoint, target: Target, stub: StubBehavior
    ) async -> Result<ApiResponse, CurlewError> {
        let context = MiddlewareContext(target: target, endpoint: endpoint, logger: logger, collectsBody: false, stub: stub)
        let request = download.request
        let codes = target.validationType.statusCodes
        let result: Result<ApiResponse, CurlewError>
        do throws(CurlewError) {
            let chain = MiddlewareNext(members: members, index: 0, transport: session)
            result = .success(
                try await chain(request, context) { head, body throws(CurlewError) in
                    // A status the target's validation refuses (an error page) is read into memory and
                    // never replaces the destination; validation then fails the call with it.
                    if !codes.isEmpty, !codes.contains(head.status.code) {
                        return try await ApiResponse(head: head, body: body, request: request)
                    }
                    do throws(TransportError) {
                        return ApiResponse(download: try await download.receive(head, body), request: request)
                    } catch {
                        throw CurlewError(error)
                    }
                })
        } catch {
            result = .failure(error)
        }
        // A middleware may have tried more than once: settle the partial files earlier attempts kept. Only a
        // transport failure can report one; otherwise it would be left where nobody knows of it.
        if case .failure(.transport(let error)) = result { return .failure(.transport(download.reportingKept(in: error))) }
        download.discardKept()
        return result
    }

    /// Applies the target's validation: a status outside `codes` fails, keeping the response reachable.
    static func validate(_ result: Result<ApiResponse, CurlewError>, codes: [Int]) -> Result<ApiResponse, CurlewError> {
        guard case .success(let response) = result, !codes.isEmpty, !codes.contains(response.statusCode) else {
            return result
        }
        return .failure(.statusCode(response))
    }
}

extension ApiResponse {
    /// The complete response of a head and its body for `request`: the transport's own response when
    /// it collected the body, otherwise the body read to its end. A head that did not come over the
    /// network (HTTP version ``/CurlewEngine/HTTPVersion/none``: a stub) has no ``transportResponse``.
    init(head: ResponseHead, body: ResponseBody, request: TransportRequest) async throws(CurlewError) {
        let response = try await body.completeResponse(head: head)
        if response.httpVersion == .none {
            self.init(statusCode: response.status.code, data: response.body, request: request, headerFields: response.headerFields)
        } else {
            self.init(response, request: request)
        }
    }
}
