// Curlew — a transport with middleware around it, for code that sends requests without a provider.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A transport wrapped in middleware: what a ``Provider`` uses inside, for sending requests without
/// targets (a service's own client, a future OpenAPI transport).
///
/// ```swift
/// let chain = MiddlewareChain([RetryMiddleware(policy: .default)], transport: session)
/// let response = try await chain.response(for: TransportRequest(url: "https://api.example.com/items"))
/// ```
public struct MiddlewareChain: Sendable {
    /// The middleware, outermost first.
    public let middleware: [any TransportMiddleware]
    /// The transport at the end of the chain.
    public let transport: any HTTPTransport

    /// A chain of `middleware` (the first is the outermost) around `transport`.
    public init(_ middleware: [any TransportMiddleware], transport: any HTTPTransport) {
        self.middleware = middleware
        self.transport = transport
    }

    /// Sends `request` through the chain and hands the response head and its body, read as it arrives,
    /// to `handler`; returns what `handler` returns.
    ///
    /// - Throws: ``CurlewError``: transport failures, the middleware's failures, what `handler` threw.
    public nonisolated(nonsending) func perform<Return>(
        _ request: TransportRequest, context: MiddlewareContext = MiddlewareContext(),
        handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        try await MiddlewareNext(members: middleware, index: 0, transport: transport)(request, context, handler: handler)
    }

    /// Sends `request` through the chain and returns the complete response.
    ///
    /// - Throws: ``CurlewError``: transport failures and the middleware's failures.
    public func response(
        for request: TransportRequest, context: MiddlewareContext = MiddlewareContext()
    ) async throws(CurlewError) -> TransportResponse {
        var context = context
        context.collectsBody = true
        return try await perform(request, context: context) { head, body throws(CurlewError) in
            try await body.completeResponse(head: head)
        }
    }
}

extension ResponseBodyStream {
    /// The complete response of `head` and this body: the transport's own when it collected the body,
    /// otherwise the body read to its end.
    // In the caller's isolation: a body the transport collected is handed back without a hop to the
    // global executor and back.
    nonisolated(nonsending) func completeResponse(head: ResponseHead) async throws(CurlewError) -> TransportResponse {
        if let completeResponse { return completeResponse }
        do {
            var response = TransportResponse(head: head, body: try await collect(upTo: Int.max))
            response.trailerFields = trailerFields
            return response
        } catch {
            throw CurlewError(error)
        }
    }
}
