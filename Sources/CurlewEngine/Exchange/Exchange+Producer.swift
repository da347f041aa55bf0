// Curlew — a stream body's producer's side of an exchange: writes, waits for room, the body's end or
// failure, and replays after a redirect.

import HTTPTypes

extension Exchange {
    /// The producer's current run.
    var generation: Int { state.withLock { $0.machine.request.generation } }

    /// Keeps the task running the stream body's producer, to cancel it when the transfer ends (at once
    /// when it has ended already).
    func adoptProducer(_ task: Task<Void, Never>) {
        let ended = state.withLock { state -> Bool in
            guard !state.machine.isFinished else { return true }
            state.producerTask = task
            return false
        }
        if ended { task.cancel() }
    }

    /// Appends a chunk written by the producer of `generation`; asks the loop to resume sending when curl
    /// waits for bytes. Returns whether the producer must wait for room, or throws why the write fails.
    func write(_ chunk: ArraySlice<UInt8>, generation: Int) throws(TransportError) -> Bool {
        let outcome = state.withLock { $0.machine.request.write(chunk, generation: generation) }
        if outcome.resumeLoop { loop.enqueue(.resume(self, .send)) }
        if let error = outcome.error { throw error }
        return outcome.mustWait
    }

    /// Waits until the held bytes drop to the low mark, the exchange ends or the run is replaced.
    func waitForRoom(generation: Int) async {
        await withUnsafeContinuation { (continuation: Continuation) in
            let wait = state.withLock { state -> Bool in
                guard state.machine.request.producerWaitsForRoom(generation: generation) else { return false }
                state.producer = continuation
                return true
            }
            if !wait { continuation.resume() }
        }
    }

    /// Wakes a producer waiting for room (its task was cancelled).
    func releaseProducer() {
        let producer = state.withLock { state -> Continuation? in
            defer { state.producer = nil }
            return state.producer
        }
        producer?.resume()
    }

    /// The producer of `generation` returned, with its trailer fields.
    func finishBody(generation: Int, trailers: HTTPFields?) {
        let resume = state.withLock { state -> Bool in
            let resume = state.machine.request.finish(generation: generation)
            if state.machine.request.generation == generation { state.requestTrailers = trailers }
            return resume
        }
        if resume { loop.enqueue(.resume(self, .send)) }
    }

    /// The producer of `generation` threw `error`: the transfer fails with it (unless the exchange is over
    /// or the run was replaced).
    func failBody(generation: Int, _ error: TransportError) {
        let resume = state.withLock { $0.machine.request.fail(generation: generation, error) }
        if resume { loop.enqueue(.resume(self, .send)) }
    }

    /// After a run ended: waits until curl asks for the body again (returns the new run) or the exchange
    /// ends (returns nil).
    func waitForReplay(after generation: Int) async -> Int? {
        while true {
            await withUnsafeContinuation { (continuation: Continuation) in
                let wait = state.withLock { state -> Bool in
                    guard state.machine.request.producerWaitsForReplay(after: generation) else { return false }
                    state.producer = continuation
                    return true
                }
                if !wait { continuation.resume() }
            }
            // The one producer slot may be resumed for room left over from the run that ended: wait on.
            let (closed, current) = state.withLock { ($0.machine.request.isClosed, $0.machine.request.generation) }
            if closed { return nil }
            if current != generation { return current }
        }
    }

    /// Whether the request side is over (writes fail).
    var isRequestClosed: Bool { state.withLock { $0.machine.request.isClosed } }
}
