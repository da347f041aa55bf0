// Curlew — the middleware protocol: code that wraps every exchange between the plugins and the transport.

import Logging

/// Reads a response: its head, and its body as it arrives. What a ``TransportMiddleware`` and the transport hand
/// the response to; it returns what the caller of the chain gets.
///
/// The body is valid only while the handler runs. A handler that returns (or throws) before the body's
/// last byte ends the exchange: the transfer is aborted and its connection closed.
public typealias ResponseHandler<Return> =
    nonisolated(nonsending) (ResponseHead, ResponseBodyStream) async throws(CurlewError) -> Return

/// Code that wraps each exchange a provider (or a ``MiddlewareChain``) makes: it may change the request,
/// answer without sending it, send it several times, time it or look at the response head before the
/// caller's handler reads the body.
///
/// A middleware is called with the request, a ``MiddlewareContext``, the rest of the chain (`next`) and
/// the caller's response handler. The usual middleware calls `next` once with the same handler:
///
/// ```swift
/// struct RequestID: TransportMiddleware {
///     func intercept<Return>(
///         _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext,
///         handler: ResponseHandler<Return>
///     ) async throws(CurlewError) -> Return {
///         var request = request
///         request.headerFields[HTTPField.Name("X-Request-ID")!] = UUID().uuidString
///         return try await next(request, context, handler: handler)
///     }
/// }
/// ```
///
/// A middleware that decides from the head (a retry on 503, a new token on 401) passes `next` a handler
/// of its own that looks at the head and returns without reading the body (which ends that exchange),
/// or calls the caller's handler. The chain runs in the caller's isolation; members must be `Sendable`
/// because one provider serves many concurrent callers.
///
/// Order: the first middleware given is the outermost. A provider runs its plugins' `prepare` and
/// `willSend` before the chain, and their `didReceive` and `process` once per call on the response it
/// hands out, inside the innermost handler (so before the code a middleware runs after `next`
/// returns), or after the chain when it failed before a response; the chain sees every attempt.
public protocol TransportMiddleware: Sendable {
    /// Carries out the exchange for `request`, usually by calling `next`, and returns what `handler`
    /// returned.
    ///
    /// - Throws: ``CurlewError``: ``CurlewError/transport(_:)`` for transport failures, what `handler`
    ///   threw, or the middleware's own failure (as ``CurlewError/underlying(_:_:)``).
    nonisolated(nonsending) func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext,
        handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return
}
