// Curlew — following a buffered request's redirects: each hop a new submission, the walk deciding, one
// deadline for all.


extension CurlSession {
    /// Follows the redirect `response` starts, hop by hop, until a response that is not followed.
    /// `request` is the first hop's (its body compressed), sent as `prepared` at `started`.
    func followRedirects(
        from response: TransportResponse, of request: TransportRequest, prepared: PreparedRequest, started: UInt64,
        deadline: UInt64?
    ) async throws(TransportError) -> TransportResponse {
        let walk = RedirectWalk(
            request, prepared: prepared, started: started, deadline: deadline, configuration: configuration)
        var response = response
        while try walk.redirects(after: response, session: self), try await walk.policyFollows(response) {
            try walk.advance(session: self)
            response = try await run(walk.prepared, deadline: deadline, isRedirectHop: true)
        }
        return walk.final(response)
    }
}
