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
    public let method: HTTPMethod
    /// What the request sends.
    public let task: RequestTask
    /// The header fields, or nil for none.
    public let httpHeaderFields: [String: String]?

    /// Creates an endpoint.
    ///
    /// - Parameters:
    ///   - url: The full URL.
    ///   - sampleResponseClosure: Produces the response a stubbed request gets.
    ///   - method: The method.
    ///   - task: What the request sends.
    ///   - httpHeaderFields: The header fields, or nil for none.
    public init(
        url: String, sampleResponseClosure: @escaping SampleResponseClosure, method: HTTPMethod,
        task: RequestTask, httpHeaderFields: [String: String]?
    ) {
        self.url = url
        self.sampleResponseClosure = sampleResponseClosure
        self.method = method
        self.task = task
        self.httpHeaderFields = httpHeaderFields
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
            httpHeaderFields: HeaderNames.merging(httpHeaderFields ?? [:], newHTTPHeaderFields))
    }

    /// A copy that sends another task.
    ///
    /// - Parameter task: The task to send instead.
    /// - Returns: The endpoint with the new task.
    public func replacing(task: RequestTask) -> Endpoint {
        Endpoint(
            url: url, sampleResponseClosure: sampleResponseClosure, method: method, task: task,
            httpHeaderFields: httpHeaderFields)
    }
}
