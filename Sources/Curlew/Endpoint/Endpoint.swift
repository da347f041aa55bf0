// Curlew — a target resolved into a concrete request description.

/// A target turned into what will be sent: URL, method, header fields, task, and the sample response
/// used when stubbing.
///
/// A provider maps each target to an endpoint (``default(for:)`` unless you give an endpoint closure),
/// then the endpoint to a request with ``urlRequest()``. Endpoints are values: the modifiers return
/// copies. They compare equal when they would build the same request (see `==`).
public struct Endpoint: Sendable {
    /// Produces the sample response for stubbing.
    public typealias SampleResponseClosure = @Sendable () -> EndpointSampleResponse

    /// The full URL, as a string so that a URL which cannot be built is reported when the request is
    /// built, as ``CurlewError/requestMapping(_:)``.
    public let url: String
    /// Produces the response a stubbed request gets.
    public let sampleResponseClosure: SampleResponseClosure
    /// The method.
    public let method: HTTPRequest.Method
    /// What the request sends.
    public let task: RequestTask
    /// The header fields, or nil for none.
    public let httpHeaderFields: [String: String]?
    /// Session settings the request overrides (timeouts, body limit, TLS identity and pins, socket).
    public let transferOptions: TransferOptions
    /// How the request's redirects are followed; nil keeps the session's policy.
    public let redirectPolicy: RedirectPolicy?
    /// The case of ``task``, read once (see ``RequestTask/shape(of:)``).
    let taskShape: RequestTask.Shape

    /// Creates an endpoint.
    ///
    /// - Parameters:
    ///   - url: The full URL.
    ///   - sampleResponseClosure: Produces the response a stubbed request gets.
    ///   - method: The method.
    ///   - task: What the request sends.
    ///   - httpHeaderFields: The header fields, or nil for none.
    ///   - transferOptions: Session settings the request overrides; none by default.
    ///   - redirectPolicy: How redirects are followed; nil (the default) keeps the session's policy.
    public init(
        url: String, sampleResponseClosure: @escaping SampleResponseClosure, method: HTTPRequest.Method,
        task: RequestTask, httpHeaderFields: [String: String]?, transferOptions: TransferOptions = TransferOptions(),
        redirectPolicy: RedirectPolicy? = nil
    ) {
        self.url = url
        self.sampleResponseClosure = sampleResponseClosure
        self.method = method
        self.task = task
        self.httpHeaderFields = httpHeaderFields
        self.transferOptions = transferOptions
        self.redirectPolicy = redirectPolicy
        taskShape = RequestTask.shape(of: task)
    }

    /// A copy with these header fields added; a new value replaces an existing field whose name is the
    /// same ignoring case (`content-type` replaces `Content-Type`), as `URLRequest` does.
    ///
    /// Adding no fields returns the endpoint unchanged: header fields that were nil stay nil.
    ///
    /// - Parameter newHTTPHeaderFields: The fields to add.
    /// - Returns: The endpoint with the merged fields.
    public func adding(newHTTPHeaderFields: [String: String]) -> Endpoint {
        guard !newHTTPHeaderFields.isEmpty else { return self }
        return Endpoint(
            url: url, sampleResponseClosure: sampleResponseClosure, method: method, task: task,
            httpHeaderFields: HeaderNames.merging(httpHeaderFields ?? [:], newHTTPHeaderFields),
            transferOptions: transferOptions, redirectPolicy: redirectPolicy)
    }

    /// A copy that sends another task.
    ///
    /// - Parameter task: The task to send instead.
    /// - Returns: The endpoint with the new task.
    public func replacing(task: RequestTask) -> Endpoint {
        Endpoint(
            url: url, sampleResponseClosure: sampleResponseClosure, method: method, task: task,
            httpHeaderFields: httpHeaderFields, transferOptions: transferOptions, redirectPolicy: redirectPolicy)
    }

    /// A copy whose stubbed requests get another sample response (a test provider answering 404, say),
    /// everything else kept.
    ///
    /// - Parameter sampleResponseClosure: Produces the response a stubbed request gets.
    /// - Returns: The endpoint with the new sample response.
    public func replacing(sampleResponseClosure: @escaping SampleResponseClosure) -> Endpoint {
        Endpoint(
            url: url, sampleResponseClosure: sampleResponseClosure, method: method, task: task,
            httpHeaderFields: httpHeaderFields, transferOptions: transferOptions, redirectPolicy: redirectPolicy)
    }

    /// A copy whose request overrides these session settings.
    ///
    /// - Parameter transferOptions: The overrides (replacing the endpoint's).
    /// - Returns: The endpoint with the new options.
    public func replacing(transferOptions: TransferOptions) -> Endpoint {
        Endpoint(
            url: url, sampleResponseClosure: sampleResponseClosure, method: method, task: task,
            httpHeaderFields: httpHeaderFields, transferOptions: transferOptions, redirectPolicy: redirectPolicy)
    }

    /// A copy whose redirects follow `redirectPolicy`.
    ///
    /// - Parameter redirectPolicy: The policy, or nil for the session's.
    /// - Returns: The endpoint with the new policy.
    public func replacing(redirectPolicy: RedirectPolicy?) -> Endpoint {
        Endpoint(
            url: url, sampleResponseClosure: sampleResponseClosure, method: method, task: task,
            httpHeaderFields: httpHeaderFields, transferOptions: transferOptions, redirectPolicy: redirectPolicy)
    }
}
