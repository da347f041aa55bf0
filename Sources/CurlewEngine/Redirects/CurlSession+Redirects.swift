// Curlew — following redirects: each hop a new submission, the rules deciding, one deadline for all.

import HTTPTypes

extension CurlSession {
    /// Follows the redirect `response` starts, hop by hop, until a response that is not followed.
    func followRedirects(
        from response: TransportResponse, of request: TransportRequest, origin: PoolKey, started: UInt64,
        deadline: UInt64?
    ) async throws(TransportError) -> TransportResponse {
        let policy = request.redirectPolicy ?? configuration.redirectPolicy
        var current = request
        var currentOrigin = origin
        var response = response
        var chain: [RedirectStep] = []
        var visited: Set<String> = ["\(request.method.rawValue) \(request.url)"]
        var queued = response.timings.queued
        var finalHopStarted = started
        let detectsLoops = !(configuration.cookies.isEnabled && request.options.handlesCookies != false)
        while true {
            let target = response.redirectURL.flatMap { url in parse(url).map { (url: url, key: $0.poolKey) } }
            let decision = RedirectRules.decide(
                request: current, origin: currentOrigin, status: response.status.code, hasLocation: response.hasLocation,
                target: target, policy: policy, hopsSoFar: chain.count, visited: visited, detectsLoops: detectsLoops)
            switch decision {
            case .returnResponse:
                return finished(response, chain: chain, queued: queued, started: started, finalHopStarted: finalHopStarted)
            case .fail(let code, let message):
                throw refusal(code, message, request: current, response: response)
            case .follow(let next, let leavesOrigin):
                if case .custom(let decide) = policy.mode {
                    let hop = RedirectHop(
                        from: current.url, status: response.status, to: next.url, nextRequest: next, hopsSoFar: chain.count,
                        leavesOrigin: leavesOrigin)
                    switch await decide(hop) {
                    case .follow:
                        break
                    case .stop:
                        return finished(response, chain: chain, queued: queued, started: started, finalHopStarted: finalHopStarted)
                    case .refuse:
                        throw refusal(.redirectRefused, "the redirect policy refused the redirect", request: current, response: response)
                    }
                }
                chain.append(RedirectStep(url: current.url, status: response.status))
                visited.insert("\(next.method.rawValue) \(next.url)")
                let prepared = try PreparedRequest(next, urls: urls)
                finalHopStarted = MonotonicClock.now()
                current = next
                currentOrigin = prepared.url.poolKey
                response = try await run(prepared, deadline: deadline, isRedirectHop: true)
                queued += response.timings.queued
            }
        }
    }

    /// The final response with its chain and the timings over all hops.
    private func finished(
        _ response: TransportResponse, chain: [RedirectStep], queued: Duration, started: UInt64, finalHopStarted: UInt64
    ) -> TransportResponse {
        guard !chain.isEmpty else { return response }
        var response = response
        response.redirects = chain
        var timings = response.timings
        timings.queued = queued
        timings.redirect = .nanoseconds(Int64(clamping: finalHopStarted &- started))
        response.timings = timings
        return response
    }

    private func refusal(
        _ code: TransportError.Code, _ message: String, request: TransportRequest, response: TransportResponse
    ) -> TransportError {
        var error = TransportError(
            code, message: "\(message) (HTTP \(response.status.code))", url: request.url, method: request.method.rawValue)
        error.location = response.redirectURL ?? response.headerFields[.location]
        return error
    }
}
