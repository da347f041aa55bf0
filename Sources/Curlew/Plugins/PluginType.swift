// Curlew — the hooks a plugin can attach to every request of a provider.

/// A plugin sees, and may change, every request a provider sends and every result it returns.
///
/// All requirements have default implementations, so a plugin implements only what it needs. Several
/// plugins run in the order they were given to the provider. Plugins see stubbed requests too.
public protocol PluginType: Sendable {
    /// Called before the request is sent; may return a modified request, or throw to fail it.
    func prepare(_ request: TransportRequest, target: any TargetType) async throws -> TransportRequest
    /// Called just before the request is sent (or the stub answers), with the request as the transport
    /// will send it: the fields the session adds itself (`User-Agent`, `Accept-Encoding`) included.
    func willSend(_ request: TransportRequest, target: any TargetType) async
    /// Called with the result, before it is returned; also for failures, including cancellation.
    func didReceive(_ result: Result<ApiResponse, CurlewError>, target: any TargetType) async
    /// Called last; may transform the result the caller gets.
    func process(_ result: Result<ApiResponse, CurlewError>, target: any TargetType) async -> Result<ApiResponse, CurlewError>
}

extension PluginType {
    public func prepare(_ request: TransportRequest, target: any TargetType) async throws -> TransportRequest { request }
    public func willSend(_ request: TransportRequest, target: any TargetType) async {}
    public func didReceive(_ result: Result<ApiResponse, CurlewError>, target: any TargetType) async {}
    public func process(
        _ result: Result<ApiResponse, CurlewError>, target: any TargetType
    ) async -> Result<ApiResponse, CurlewError> { result }
}
