// Curlew — a request as the engine sends it.

public import HTTPTypes

/// An HTTP request for the engine: where, how, which header fields, and an optional body.
///
/// Named `TransportRequest` so it does not clash with the `Request` types of server frameworks or with
/// the provider-level request built from a target. The URL is checked when the request is executed;
/// use ``init(url:method:headers:body:timeout:)`` to have header strings checked as you build it.
public struct TransportRequest: Sendable, Hashable {
    /// Compares what is sent: URL, method, header fields, body, timeout and options (the redirect policy, which
    /// may hold a closure, is not compared).
    public static func == (lhs: TransportRequest, rhs: TransportRequest) -> Bool {
        lhs.url == rhs.url && lhs.method == rhs.method && lhs.headerFields == rhs.headerFields && lhs.body == rhs.body
            && lhs.timeout == rhs.timeout && lhs.options == rhs.options
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(method)
        hasher.combine(headerFields)
        hasher.combine(body)
        hasher.combine(timeout)
        hasher.combine(options)
    }

    /// The absolute `http` or `https` URL.
    public var url: String
    /// The request method.
    public var method: HTTPRequest.Method
    /// The header fields to send, in order.
    public var headerFields: HTTPFields
    /// The body, if any.
    public var body: TransportRequest.Body?
    /// A total timeout for this request that overrides the session's
    /// (``SessionConfiguration/totalTimeout``), counted from the call, queue and redirects included.
    ///
    /// - Important: For a buffered response (``CurlSession/execute(_:)``, a provider's `request`) it
    ///   covers the whole exchange. For a **streamed** response (``CurlSession/perform(_:isolation:handler:)``,
    ///   a provider's `stream`, downloads) it **stops when the final head arrives**: a body that keeps
    ///   trickling is watched only by the idle timeout. It applies again once the handler has returned
    ///   with the whole response while a stream body is still being sent (``CurlSession/perform(_:isolation:handler:)``
    ///   waits for that body's end). Set ``TransferOptions/timeoutCoversBody`` to bound the whole streamed
    ///   exchange. Event streams have no total timeout.
    public var timeout: Duration?
    /// The redirect policy for this request; nil: the session's.
    public var redirectPolicy: RedirectPolicy?
    /// Settings this request overrides (timeouts, body limit, TLS identity and pins, Unix socket).
    public var options = TransferOptions()
    /// The call this request belongs to, for its log lines, metrics and spans (not sent, not compared);
    /// a provider sets it.
    public var call: CallContext?
    /// Which redirect hop of its request this is (0: the request as sent first); set by the redirect walk.
    var redirectIndex = 0

    /// Creates a request from already-typed header fields.
    public init(
        url: String, method: HTTPRequest.Method = .get, headerFields: HTTPFields = [:],
        body: TransportRequest.Body? = nil, timeout: Duration? = nil
    ) {
        self.url = url
        self.method = method
        self.headerFields = headerFields
        self.body = body
        self.timeout = timeout
    }

    /// Creates a request from header name/value strings, refusing any that could not be sent as given.
    ///
    /// - Throws: ``TransportError/Code/invalidHeader`` when a name is not an HTTP token or a value
    ///   contains CR, LF or NUL. (`HTTPFields` would otherwise silently turn those bytes into spaces.)
    public init(
        url: String, method: HTTPRequest.Method = .get, headers: [(name: String, value: String)],
        body: TransportRequest.Body? = nil, timeout: Duration? = nil
    ) throws(TransportError) {
        var fields = HTTPFields()
        for (name, value) in headers {
            fields.append(try HeaderValidation.field(name: name, value: value))
        }
        self.init(url: url, method: method, headerFields: fields, body: body, timeout: timeout)
    }
}
