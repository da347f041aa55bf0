// Curlew — the state of a request's walk through its redirects, hop by hop, buffered or streamed.

import HTTPTypes

/// What a redirect is decided from: a streamed response's head or a complete response.
protocol RedirectAnswer {
    var status: HTTPResponse.Status { get }
    var hasLocation: Bool { get }
    var redirectURL: String? { get }
    var headerFields: HTTPFields { get }
    var timings: TransferTimings { get set }
    var redirects: [RedirectStep] { get set }
}

extension ResponseHead: RedirectAnswer {}
extension TransportResponse: RedirectAnswer {}

/// One request's redirects: the request of the current hop, the hops so far and what the rules need
/// to decide on the next. Used by one task at a time (the one performing the request), for buffered
/// and streamed requests alike.
///
/// A class, so that the async frames of the scoped exchange hold one reference instead of the
/// requests, the chain and the visited set: those frames stay allocated for as long as the body is
/// read, which for a stream is its whole life.
final class RedirectWalk {
    let started: UInt64
    let deadline: UInt64?
    private let policy: RedirectPolicy
    private let detectsLoops: Bool
    /// The current hop's request, as given and as prepared for the engine.
    private var current: TransportRequest
    private(set) var prepared: PreparedRequest
    private(set) var chain: [RedirectStep] = []
    /// `METHOD URL` of each request made: a few, compared byte for byte (see `RedirectRules.decide`).
    private var visited: [String]
    private var queued = Duration.zero
    private(set) var hopStarted: UInt64
    /// The request of the next hop, once a redirect is to be followed; the status that led to it.
    private var next: (request: TransportRequest, leavesOrigin: Bool, status: HTTPResponse.Status)?

    /// A walk from `request` (its body already compressed), sent as `prepared` at `started`.
    init(
        _ request: TransportRequest, prepared: PreparedRequest, started: UInt64, deadline: UInt64?,
        configuration: SessionConfiguration
    ) {
        self.started = started
        self.deadline = deadline
        policy = request.redirectPolicy ?? configuration.redirectPolicy
        detectsLoops = !(configuration.cookies.isEnabled && request.options.handlesCookies != false)
        current = request
        self.prepared = prepared
        visited = ["\(request.method.rawValue) \(request.url)"]
        hopStarted = started
    }

    /// A walk for a streamed request. `sessionTotalTimeout` false leaves the session's total timeout
    /// out (downloads), keeping the request's own.
    convenience init(_ request: TransportRequest, session: CurlSession, sessionTotalTimeout: Bool) throws(TransportError) {
        let started = MonotonicClock.now()
        let request = try request.applyingCompression()
        let configuration = session.configuration
        // Event streams have none: they are meant to last, and the idle timeout watches them.
        let sessionTotal = sessionTotalTimeout && !request.options.eventStream ? configuration.totalTimeout : nil
        let total = request.timeout.map { UInt64(max(1, $0.nanoseconds)) } ?? sessionTotal.map {
            UInt64(max(1, $0.nanoseconds))
        }
        self.init(
            request, prepared: try PreparedRequest(request, urls: session.urls), started: started,
            deadline: total.map { started &+ $0 }, configuration: configuration)
    }

    /// Whether `head` is a redirect the rules follow (a custom policy is asked next, by
    /// ``policyFollows(_:)``); throws when the rules refuse it.
    @inline(never)
    func redirects(after head: some RedirectAnswer, session: CurlSession) throws(TransportError) -> Bool {
        queued += head.timings.queued
        next = nil
        guard (300..<400).contains(head.status.code), head.hasLocation else { return false }
        let target = head.redirectURL.flatMap { url in session.parse(url).map { (url: url, key: $0.poolKey) } }
        let decision = RedirectRules.decide(
            request: current, origin: prepared.url.poolKey, status: head.status.code, hasLocation: true,
            target: target, policy: policy, hopsSoFar: chain.count, visited: visited, detectsLoops: detectsLoops)
        switch decision {
        case .returnResponse:
            return false
        case .fail(let code, let message):
            throw Self.refusal(code, message, request: current, head: head)
        case .follow(let request, let leavesOrigin):
            next = (request, leavesOrigin, head.status)
            return true
        }
    }

    /// Whether the redirect found by ``redirects(after:session:)`` is followed: a custom policy decides;
    /// throws when it refuses.
    @inline(never)
    nonisolated(nonsending) func policyFollows(_ head: some RedirectAnswer) async throws(TransportError) -> Bool {
        guard case .custom(let decide) = policy.mode, let next else { return true }
        let step = RedirectHop(
            from: current.url, status: head.status, to: next.request.url, nextRequest: next.request,
            hopsSoFar: chain.count, leavesOrigin: next.leavesOrigin)
        switch await decide(step) {
        case .follow:
            return true
        case .stop:
            self.next = nil
            return false
        case .refuse:
            throw Self.refusal(.redirectRefused, "the redirect policy refused the redirect", request: current, head: head)
        }
    }

    /// The head handed to the caller: with the redirects that led to it and their time.
    @inline(never)
    func final<Answer: RedirectAnswer>(_ head: Answer) -> Answer {
        guard !chain.isEmpty else { return head }
        var final = head
        final.redirects = chain
        final.timings.queued = queued
        final.timings.redirect = .nanoseconds(Int64(clamping: hopStarted &- started))
        return final
    }

    /// Moves on to the redirect being followed.
    @inline(never)
    func advance(session: CurlSession) throws(TransportError) {
        guard let next else { return }
        self.next = nil
        chain.append(RedirectStep(url: current.url, status: next.status))
        visited.append("\(next.request.method.rawValue) \(next.request.url)")
        var request = next.request
        request.redirectIndex = chain.count
        prepared = try PreparedRequest(request, urls: session.urls)
        current = request
        hopStarted = MonotonicClock.now()
    }

    private static func refusal(
        _ code: TransportError.Code, _ message: String, request: TransportRequest, head: some RedirectAnswer
    ) -> TransportError {
        var error = TransportError(
            code, message: "\(message) (HTTP \(head.status.code))", url: request.url, method: request.method.rawValue)
        error.location = head.redirectURL ?? head.headerFields[.location]
        return error
    }
}
