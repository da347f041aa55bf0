// Curlew — a transport that answers from a script and records what it was asked, without sockets.

public import CurlewEngine
public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A transport for your own tests: it records every request it receives and answers each with a
/// scripted response or error. Nothing touches the network.
///
/// Give it to a provider as its `session`:
///
/// ```swift
/// let transport = MockTransport(replies: [.status(200, body: #"{"token":"t"}"#), .failure(.init(.timedOut, message: "slow"))])
/// let provider = Provider<Auth>(session: transport)
/// ```
///
/// Replies are used in order; a request beyond the script fails with ``/CurlewEngine/TransportError/Code/curl`` naming
/// the request, so a test that sends more than it expects fails loudly. A responder closure can answer
/// by inspecting each request instead. A cancelled calling task gets ``/CurlewEngine/TransportError/Code/cancelled``.
public final class MockTransport: HTTPTransport {
    /// Answers one request: a response, or a thrown transport error.
    public typealias Responder = @Sendable (TransportRequest) async throws(TransportError) -> TransportResponse

    /// One scripted answer.
    public enum Reply: Sendable {
        /// This response. An empty `effectiveURL` is filled in with the request's URL.
        case response(TransportResponse)
        /// This error, thrown as a transport failure would be.
        case failure(TransportError)

        /// A response with this status, body and header fields, over HTTP/1.1.
        public static func status(_ code: Int, body: String = "", headers: HTTPFields = [:]) -> Reply {
            .status(code, data: Data(body.utf8), headers: headers)
        }

        /// A response with this status, body bytes and header fields, over HTTP/1.1.
        public static func status(_ code: Int, data: Data, headers: HTTPFields = [:]) -> Reply {
            .response(
                TransportResponse(
                    status: HTTPResponse.Status(code: code), headerFields: headers, body: data, httpVersion: .http1_1))
        }
    }

    private let recorded = Locked<[TransportRequest]>([])
    private let responder: Responder

    /// A transport that answers with `replies`, one per request, in order.
    public init(replies: [Reply]) {
        let script = Locked((replies: replies, next: 0))
        responder = { request throws(TransportError) in
            let reply = script.withLock { script -> Reply? in
                guard script.next < script.replies.count else { return nil }
                defer { script.next += 1 }
                return script.replies[script.next]
            }
            switch reply {
            case .response(let response): return response
            case .failure(let error): throw error
            case nil:
                throw TransportError(
                    .curl, message: "MockTransport has no scripted reply left for \(request.method.rawValue) \(request.url)",
                    url: request.url, method: request.method.rawValue)
            }
        }
    }

    /// A transport that answers every request with `responder`.
    public init(_ responder: @escaping Responder) {
        self.responder = responder
    }

    /// Every request received so far, in order.
    public var requests: [TransportRequest] { recorded.withLock { $0 } }

    /// Records the request and answers it from the script or the responder.
    public func execute(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        recorded.withLock { $0.append(request) }
        if Task.isCancelled { throw Self.cancelled(request) }
        var response = try await responder(request)
        if Task.isCancelled { throw Self.cancelled(request) }
        if response.effectiveURL.isEmpty { response.effectiveURL = request.url }
        return response
    }

    private static func cancelled(_ request: TransportRequest) -> TransportError {
        TransportError(.cancelled, message: "the task was cancelled", url: request.url, method: request.method.rawValue)
    }
}
