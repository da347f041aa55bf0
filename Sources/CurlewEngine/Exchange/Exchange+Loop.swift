// Curlew — the loop thread's side of an exchange: registration, a streamed response's head, bytes and
// end, a stream body's reads and rewinds.

import HTTPTypes

extension Exchange {
    // MARK: Registration

    /// Records the loop's identifier. Returns true when the task was cancelled in the meantime, so the
    /// loop cancels at once (the cancellation saw no identifier to ask for).
    func register(_ id: TransferID) -> Bool {
        state.withLock { state in
            state.id = id
            return state.machine.registered()
        }
    }

    /// The loop's identifier, once registered.
    var registeredID: TransferID? { state.withLock { $0.id } }

    /// curl took the transfer.
    func started() {
        state.withLock { $0.machine.started() }
    }

    // MARK: A streamed response

    /// The final head arrived. Returns whether to wake the reader (at the end of the pass).
    func deliver(head: ResponseHead) -> Bool {
        state.withLock { state in
            state.machine.response.deliver(head: head) && state.machine.scheduleWake()
        }
    }

    /// Whether a delivery of `count` bytes may be taken; when not, the exchange records that curl paused.
    /// For a reader that keeps up the mark grows first, as far as the session's budget allows.
    func hasRoom(for count: Int) -> Bool {
        let room = state.withLock { $0.machine.room(for: count) }
        switch room {
        case .fits:
            return true
        case .pause:
            return false
        case .grow(let bytes):
            let granted = loop.streamBudget.reserve(bytes)
            return state.withLock { state in
                state.machine.response.grow(by: granted)
                return state.machine.response.hasRoom(for: count)
            }
        }
    }

    /// Copies body bytes in (after ``hasRoom(for:)``), a bulk delivery into `storage`'s arrays. Returns
    /// when to wake the reader.
    func append(_ bytes: UnsafeRawBufferPointer, storage: inout ChunkRecycler?) -> Machine.Wake {
        guard !bytes.isEmpty else { return .none }
        if bytes.count >= Self.bulkDelivery {
            // Taken out and put back rather than copied: a copy would share the slots, and none would be
            // found free.
            var recycler = storage.take() ?? state.withLock { ChunkRecycler(for: $0.machine.response) }
            // Copied before the lock is taken: the reader is not held up while 64 KiB are copied.
            let chunk = recycler.chunk(copying: bytes)
            storage = recycler
            return state.withLock { state in
                guard state.machine.response.append(chunk: chunk) else { return .none }
                return state.machine.delivered()
            }
        }
        return state.withLock { state in
            guard state.machine.response.append(bytes) else { return .none }
            return state.machine.delivered()
        }
    }

    /// A delivery at least this long becomes a chunk of its own, copied outside the lock; shorter ones (an
    /// event, a trickle) are joined to the last unread chunk.
    static let bulkDelivery = 16 * 1024

    /// The body ended before the transfer did (or with it). Returns whether to wake the reader.
    func endBody(_ end: Machine.BodyEnd, trailers: HTTPFields? = nil) -> Bool {
        state.withLock { state in
            guard state.machine.response.end(end) else { return false }
            state.responseTrailers = trailers
            return state.machine.scheduleWake()
        }
    }

    /// Resumes a waiting reader (at the end of the loop's pass, or at once).
    func wake() {
        let waiter = state.withLock { state -> Continuation? in
            guard state.machine.takeWaiter() else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The loop resumed `direction` after the reader or the producer asked it to.
    func loopResumed(_ direction: PauseDirection) {
        state.withLock { state in
            switch direction {
            case .receive: state.machine.response.loopResumed()
            case .send: state.machine.request.loopResumed()
            }
        }
    }

    // MARK: A stream body

    /// Copies up to `capacity` bytes into curl's upload buffer for the read callback. A producer waiting
    /// for room is resumed at once, so it refills while curl sends.
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Machine.Read {
        let (read, producer) = state.withLock { state -> (Machine.Read, Continuation?) in
            let (read, resume) = state.machine.request.read(into: buffer, capacity: capacity)
            var producer: Continuation?
            if resume { swap(&producer, &state.producer) }
            return (read, producer)
        }
        producer?.resume()
        return read
    }

    /// Why the stream body failed, if it did.
    var requestFailure: TransportError? { state.withLock { $0.machine.request.failure } }

    /// The trailer fields to send after the last byte.
    var trailerFields: HTTPFields? { knownTrailers ?? state.withLock { $0.requestTrailers } }

    /// curl rewinds the stream body to its first byte: a replayable one runs its producer again. Returns
    /// whether the rewind succeeded.
    func rewind() -> Bool {
        let (rewound, producer) = state.withLock { state -> (Bool, Continuation?) in
            let (rewound, resume) = state.machine.request.rewind()
            var producer: Continuation?
            if resume {
                state.requestTrailers = nil
                swap(&producer, &state.producer)
            }
            return (rewound, producer)
        }
        producer?.resume()
        return rewound
    }

    /// The request side is over (curl stopped sending, the exchange ended): writes fail from now on and a
    /// waiting producer is woken.
    func closeRequest() {
        let producer = state.withLock { state -> Continuation? in
            guard state.machine.request.close() else { return nil }
            defer { state.producer = nil }
            return state.producer
        }
        producer?.resume()
    }
}
