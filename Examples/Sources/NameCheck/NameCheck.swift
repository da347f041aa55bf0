// Curlew beside what a service imports: every public type of Curlew's products, named unqualified in one
// file that also imports Hummingbird, NIOHTTP1, NIOSSL, AsyncHTTPClient and the OpenAPI runtime, next to
// those libraries' own types. This file compiles only while none of the names is ambiguous; `make examples`
// also checks that the lists below name every public type Curlew has (Scripts/check-names.py).
//
// The names deprecated in 0.1.0 (`RequestBody`, `ResponseBody`, `Cookie`, `HTTPMethod`, `HTTPVersion`,
// `TLSConfiguration`, `TLSVersion`, `ServerSentEvent`, `Middleware`, `Authenticator`) are left out: they
// are the old names kept for one release, and they still clash until 0.2.0 removes them.

import AsyncHTTPClient
import Curlew
import CurlewOpenAPI
import CurlewServiceLifecycle
import CurlewTesting
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOSSL
import OpenAPIRuntime

/// A target, for the generic types that need one.
enum CheckedAPI: ApiErrorMessageTarget {
    case item
    typealias ErrorMessage = ApiErrorMessage
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "/item" }
    var method: Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}

/// A credential and its authenticator, for ``AuthenticationMiddleware``.
struct CheckedToken: AuthenticationCredential {}

struct CheckedAuthenticator: CredentialAuthenticator {
    func apply(_ credential: CheckedToken, to request: inout TransportRequest) {}
    func refresh(_ credential: CheckedToken?, context: MiddlewareContext) async throws -> CheckedToken { CheckedToken() }
}

/// Curlew's public types (module Curlew, with the engine's it re-exports), unqualified.
let curlewTypes: [Any.Type] = [
    // Curlew
    (any AccessTokenAuthorizable).self, AccessTokenPlugin.self, ApiErrorMessage.self, (any ApiErrorMessageTarget).self,
    ApiResponse.self, ApiResult<Int, ApiErrorMessage>.self, ApiResultError<ApiErrorMessage>.self,
    (any AuthenticationCredential).self, AuthenticationError.self, AuthenticationMiddleware<CheckedAuthenticator>.self,
    AuthorizationType.self, (any CredentialAuthenticator).self, Credentials.self, CredentialsPlugin.self,
    CurlewError.self, DecodedEvent<Int>.self, DecodedTargetEvents<Int>.self, EmptyBody.self, Endpoint.self,
    EndpointSampleResponse.self, EscapingResponseBody.self, FormDataStream.self, JSONEncoding.self, JSONValue.self,
    Method.self, MiddlewareChain.self, (any MiddlewareClock).self, MiddlewareContext.self, MiddlewareNext.self,
    MultiTarget.self, MultipartEncodingError.self, MultipartFormBodyPart.self, MultipartFormData.self,
    NetworkActivityChangeType.self, NetworkActivityPlugin.self, NetworkLoggerPlugin.self, (any ParameterEncoding).self,
    ParameterEncodingError.self, (any PluginType).self, PropertyListEncoding.self, Provider<CheckedAPI>.self,
    RequestTask.self, ResponseHandler<Int>.self, RetryBudget.self, RetryMiddleware.self, RetryPolicy.self,
    StubBehavior.self, SystemMiddlewareClock.self, TargetEvents.self, (any TargetType).self,
    (any TransportMiddleware).self, URLEncoding.self, UndecodableEvents.self, UnexpectedApiError.self,
    ValidationType.self,
    // CurlewEngine
    Backoff.self, BackoffState.self, CallContext.self, ClientIdentity.self, ClientMetricNames.self,
    ConnectionOptions.self, CookieStorage.self, CurlSession.self, CurlSession.Cookie.self, DetachedResponseBody.self,
    DownloadDestination.self, DownloadOptions.self, DownloadResponse.self, EventStreamActivities<TransportError>.self,
    EventStreamActivity.self, EventStreamError.self, EventStreamParser.self, EventStreamPolicy.self,
    EventStreamReconnection.self, (any HTTPTransport).self, HTTPVersionPolicy.self, HeaderValidation.self,
    HostStatistics.self, Libcurl.self, LibcurlVersion.self, ProgressUpdate<TransportResponse>.self,
    ProgressUpdates<TransportResponse, TransportError>.self, RedirectHop.self, RedirectPolicy.self, RedirectStep.self,
    RequestBodyWriter.self, RequestCompression.self, ResponseBodyStream.self, ResponseHead.self,
    ResponseHead.HTTPVersion.self, ResumeData.self, ServerSentEvents.self, ServerSentEvents.Event.self,
    SessionConfiguration.self, SessionConfiguration.TLS.self, SessionConfiguration.TLS.Version.self,
    SessionStatistics.self, SystemTrustStore.self, TLSFailureReason.self, Telemetry.self, TransferOptions.self,
    TransferProgress.self, TransferTimings.self, TransportError.self, TransportRequest.self, TransportRequest.Body.self,
    TransportResponse.self, TrustRoots.self,
]

/// The other products' public types, unqualified.
let curlewProductTypes: [Any.Type] = [
    // CurlewOpenAPI
    CurlewTransport.self, OpenAPIMiddleware.self,
    // CurlewTesting
    Compression.self, LocalHTTPServer.self, MockTransport.self, RawEnding.self, ServerReply.self, ServerRequest.self,
    ServerStatistics.self, TestClock.self,
]

/// The other libraries' types that shared a name with Curlew's before 0.1.0, and their neighbours,
/// unqualified in the same file.
let neighbourTypes: [Any.Type] = [
    // Hummingbird (RequestBody and ResponseBody re-exported from HummingbirdCore)
    Router<BasicRequestContext>.self, Request.self, Response.self, RequestBody.self, ResponseBody.self,
    (any RouterMiddleware).self, HTTPError.self,
    // NIOHTTP1 and NIOCore
    HTTPHeaders.self, HTTPResponseStatus.self, HTTPRequestHead.self, ByteBuffer.self,
    // NIOSSL
    NIOSSLCertificate.self, CertificateVerification.self,
    // AsyncHTTPClient
    HTTPClient.self, HTTPClientRequest.self, HTTPClientResponse.self, HTTPClientError.self,
    // OpenAPI runtime
    (any ClientTransport).self, (any ClientMiddleware).self, HTTPBody.self,
]

/// A route that answers from an upstream through Curlew, with both libraries' vocabulary in one scope.
func checkedRoute(_ router: Router<BasicRequestContext>, provider: Provider<CheckedAPI>) {
    router.get("/item") { _, _ -> Response in
        let response: ApiResponse = try await provider.request(.item)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: response.data)))
    }
}

/// NIO's and async-http-client's configuration beside Curlew's, unqualified.
func checkedConfigurations() -> (HTTPClient.Configuration, SessionConfiguration) {
    var clientTLS = TLSConfiguration.makeClientConfiguration()
    clientTLS.minimumTLSVersion = .tlsv12
    var session = SessionConfiguration()
    session.tls.minimumVersion = .tls1_2
    return (HTTPClient.Configuration(tlsConfiguration: clientTLS), session)
}
