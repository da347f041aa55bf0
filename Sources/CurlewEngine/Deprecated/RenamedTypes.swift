// Curlew — the engine's names before 0.1.0, kept for one release so that code written against them still
// builds (with a warning and a fix-it). They shared their names with types of Hummingbird, SwiftNIO or
// swift-openapi-runtime, so a file importing both had to qualify them; removed in 0.2.0.

/// The body of a request. Renamed ``TransportRequest/Body``.
@available(*, deprecated, renamed: "TransportRequest.Body")
public typealias RequestBody = TransportRequest.Body

/// The body of a streamed response. Renamed ``ResponseBodyStream``.
@available(*, deprecated, renamed: "ResponseBodyStream")
public typealias ResponseBody = ResponseBodyStream

/// A cookie in a session's jar. Renamed ``CurlSession/Cookie``.
@available(*, deprecated, renamed: "CurlSession.Cookie")
public typealias Cookie = CurlSession.Cookie

/// The protocol version a response was received with. Renamed ``ResponseHead/HTTPVersion``.
@available(*, deprecated, renamed: "ResponseHead.HTTPVersion")
public typealias HTTPVersion = ResponseHead.HTTPVersion

/// A session's TLS settings. Renamed ``SessionConfiguration/TLS``.
@available(*, deprecated, renamed: "SessionConfiguration.TLS")
public typealias TLSConfiguration = SessionConfiguration.TLS

/// A TLS protocol version. Renamed ``SessionConfiguration/TLS/Version``.
@available(*, deprecated, renamed: "SessionConfiguration.TLS.Version")
public typealias TLSVersion = SessionConfiguration.TLS.Version

/// One server-sent event. Renamed ``ServerSentEvents/Event``.
@available(*, deprecated, renamed: "ServerSentEvents.Event")
public typealias ServerSentEvent = ServerSentEvents.Event
