// Curlew — reports when requests begin and end.

/// Whether a request has begun or ended.
public enum NetworkActivityChangeType: Sendable, Hashable {
    /// The request is about to be sent.
    case began
    /// The result has arrived (or the request failed).
    case ended
}

/// Calls a closure when each request begins (just before sending) and ends (with its result).
public struct NetworkActivityPlugin: PluginType {
    /// Receives each change and the target it concerns (the wrapped target under ``MultiTarget``).
    public typealias NetworkActivityClosure = @Sendable (_ change: NetworkActivityChangeType, _ target: any TargetType) -> Void

    let networkActivityClosure: NetworkActivityClosure

    /// Creates the plugin with the closure to call.
    public init(networkActivityClosure: @escaping NetworkActivityClosure) {
        self.networkActivityClosure = networkActivityClosure
    }

    public func willSend(_ request: TransportRequest, target: any TargetType) async {
        networkActivityClosure(.began, MultiTarget.unwrapped(target))
    }

    public func didReceive(_ result: Result<ApiResponse, CurlewError>, target: any TargetType) async {
        networkActivityClosure(.ended, MultiTarget.unwrapped(target))
    }
}
