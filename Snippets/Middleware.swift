// Middleware: retries that are safe by construction, a token refreshed once for everyone, your own.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation
import Synchronization

// A server that is busy twice, then answers, and that accepts only the token "fresh".
let busy = Mutex(0)
let server = try await LocalHTTPServer.start { request in
    switch request.path {
    case "/report":
        let attempt = busy.withLock { count in
            count += 1
            return count
        }
        return attempt <= 2 ? .text("busy", status: 503, headers: [("Retry-After", "0")]) : .json(#"{"rows":3}"#)
    default:
        return request.header("authorization") == "Bearer fresh" ? .json(#"{"name":"curlew"}"#) : .text("expired", status: 401)
    }
}
// snippet.show

enum Reports: TargetType {
    case daily
    case me

    var baseURL: URL { URL(string: server.baseURL)! }
    var path: String { self == .daily ? "/report" : "/me" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}

// A credential and how to apply and refresh it. The middleware refreshes once however many requests
// are refused at the same time, and replays each of them once.
struct Token: AuthenticationCredential {
    let value: String
}

struct TokenService: CredentialAuthenticator {
    func apply(_ credential: Token, to request: inout TransportRequest) {
        request.headerFields[.authorization] = "Bearer \(credential.value)"
    }

    func refresh(_ credential: Token?, context: MiddlewareContext) async throws -> Token {
        Token(value: "fresh")  // a call to your identity provider
    }
}

// Your own middleware: it wraps every attempt (the retries' included) and sees the head first.
struct Timing: TransportMiddleware {
    func intercept<Return>(
        _ request: TransportRequest, context: MiddlewareContext, next: MiddlewareNext,
        handler: ResponseHandler<Return>
    ) async throws(CurlewError) -> Return {
        let started = ContinuousClock.now
        return try await next(request, context) { head, body throws(CurlewError) in
            context.logger.info("\(request.method) \(request.url): \(head.status.code) after \(ContinuousClock.now - started), attempt \(context.attempt)")
            return try await handler(head, body)
        }
    }
}

let provider = Provider<Reports>(
    middleware: [
        RetryMiddleware(policy: RetryPolicy(maxAttempts: 4, backoff: Backoff(base: .milliseconds(50), cap: .seconds(2)))),
        AuthenticationMiddleware(TokenService(), credential: Token(value: "expired")),
        Timing(),
    ])

let report = try await provider.request(.daily)  // 503, 503, then 200
print(report.statusCode, String(decoding: report.data, as: UTF8.self))

let me = try await provider.request(.me)  // 401, one refresh, replayed: 200
print(me.statusCode, String(decoding: me.data, as: UTF8.self))
// snippet.hide
precondition(report.statusCode == 200 && me.statusCode == 200)
try await server.shutdown()
