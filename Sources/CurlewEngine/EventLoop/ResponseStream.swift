// Curlew — a streamed response's hand-over from the loop thread to the consuming task.

import HTTPTypes

/// The head, the body chunks curl delivered and the consumer has not read yet, and how the response
/// ended, with the consumer's wait.
///
/// The loop thread's header and write callbacks deliver the head and copy body bytes in; when the
/// consumer holds ``highWater`` bytes unread, the write callback pauses the receive direction instead,
/// and curl keeps that write (one receive buffer at most) and stops reading the socket. The consumer
/// takes chunks out and, once fewer than half of ``highWater`` remain, asks the loop to resume. So
/// the bytes held for one response on the client are at most the receive buffer plus ``highWater``
/// (over HTTP/1.1; see the Sessions article for HTTP/2). One lock orders both sides; the consumer is
/// resumed by the loop at the end of its pass, once for everything that pass delivered, or at once when
/// half the mark is held (so it drains while curl reads on, and a fast consumer never meets a pause).
final class ResponseStream: Sendable {
    /// How a response ended.
    enum End: Sendable {
        /// Every byte arrived; the trailer fields, if any came.
        case complete(trailers: HTTPFields?)
        case failed(TransportError)
    }

    /// When the consumer is to be resumed after a delivery (ordered: the later case wins).
    enum Wake: Int, Comparable {
        /// It is running, or a resumption is already on its way.
        case none
        /// At the end of the loop's pass, once for everything the pass delivered.
        case endOfPass
        /// At once: half the mark is held, so the consumer drains while curl keeps reading instead of
        /// the stream filling up and pausing.
        case now

        static func < (lhs: Wake, rhs: Wake) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What the consumer gets next.
    enum Next: Sendable {
        case chunk(ArraySlice<UInt8>, resumeLoop: Bool)
        case end(End)
    }

    private struct State {
        var head: ResponseHead?
        /// Unread chunks from `first` on; the last one grows while it has room (fewer, larger chunks).
        var chunks: [[UInt8]] = []
        var first = 0
        var held = 0
        var end: End?
        var waiter: UnsafeContinuation<Void, Never>?
        var wakePending = false
        /// The write callback paused; the consumer asks the loop to resume once it has made room.
        var loopPaused = false
        var resumeAsked = false
        /// The consumer is gone (its closure returned): deliveries are dropped.
        var released = false
    }

    /// Most unread bytes held before the receive direction pauses.
    let highWater: Int
    /// Largest chunk handed to the consumer: deliveries are joined up to it.
    let chunkLimit: Int
    private let state = Locked(State())

    init(highWater: Int, chunkLimit: Int) {
        self.highWater = max(1, highWater)
        self.chunkLimit = max(1, chunkLimit)
    }

    // MARK: Loop side

    /// The head arrived. Returns whether to wake the consumer.
    func deliver(head: ResponseHead) -> Bool {
        state.withLock { state in
            state.head = head
            return Self.scheduleWake(&state)
        }
    }

    /// Whether a delivery of `count` bytes may be taken; when not, the stream records that the loop paused.
    func hasRoom(for count: Int) -> Bool {
        state.withLock { state in
            if state.released || state.held == 0 || state.held + count <= highWater { return true }
            state.loopPaused = true
            state.resumeAsked = false
            return false
        }
    }

    /// Copies body bytes in (after ``hasRoom(for:)``), joined to the last unread chunk while it has room.
    func append(_ bytes: UnsafeRawBufferPointer) -> Wake {
        guard !bytes.isEmpty else { return .none }
        return state.withLock { state in
            if state.released { return .none }
            if state.first < state.chunks.count, state.chunks[state.chunks.count - 1].count + bytes.count <= chunkLimit {
                state.chunks[state.chunks.count - 1].append(contentsOf: bytes)
            } else {
                // Bulk deliveries get a chunk with room for the next ones; small ones (events) their size.
                var chunk: [UInt8] = []
                chunk.reserveCapacity(bytes.count >= 4096 ? max(chunkLimit, bytes.count) : bytes.count)
                chunk.append(contentsOf: bytes)
                state.chunks.append(chunk)
            }
            state.held += bytes.count
            guard state.waiter != nil else { return .none }
            if state.held >= highWater / 2 {
                state.wakePending = true
                return .now
            }
            return Self.scheduleWake(&state) ? .endOfPass : .none
        }
    }

    /// The response ended. Returns whether to wake the consumer.
    func finish(_ end: End) -> Bool {
        state.withLock { state in
            guard state.end == nil else { return false }
            state.end = end
            return Self.scheduleWake(&state)
        }
    }

    /// Resumes a waiting consumer (at the end of the loop's pass, or at once for rare events).
    func wake() {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            state.wakePending = false
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The loop resumed the receive direction.
    func loopResumed() {
        state.withLock { state in
            state.loopPaused = false
            state.resumeAsked = false
        }
    }

    /// Bytes held unread (for tests and statistics).
    var heldBytes: Int { state.withLock { $0.held } }

    private static func scheduleWake(_ state: inout State) -> Bool {
        guard state.waiter != nil, !state.wakePending else { return false }
        state.wakePending = true
        return true
    }

    // MARK: Consumer side

    /// The head (nil while it has not arrived); throws the failure that ended the response before it.
    ///
    /// Each of the consumer's waits is a synchronous look and a bare wait: an idle stream's task then
    /// keeps only small async frames (an event stream sits in them for hours).
    ///
    /// - Parameter taking: The stream lets go of the head: a long-lived stream's reader keeps only what
    ///   it needs of it.
    @inline(never)
    func pollHead(taking: Bool = false) throws(TransportError) -> ResponseHead? {
        let ready = state.withLock { state -> Result<ResponseHead, TransportError>? in
            if let head = state.head {
                if taking { state.head = nil }
                return .success(head)
            }
            if case .failed(let error) = state.end { return .failure(error) }
            if case .complete = state.end {
                return .failure(TransportError(.invalidResponse, message: "the response ended without a head"))
            }
            return nil
        }
        return try ready?.get()
    }

    /// Returns once the head or the end has arrived.
    func waitForHead() async {
        await wait { $0.head != nil || $0.end != nil }
    }

    /// The next chunk, or the end; nil while there is neither.
    @inline(never)
    func poll() -> Next? {
        state.withLock { state -> Next? in
            if state.first < state.chunks.count {
                let chunk = state.chunks[state.first][...]
                state.chunks[state.first] = []
                state.first += 1
                if state.first == state.chunks.count {
                    state.chunks.removeAll(keepingCapacity: true)
                    state.first = 0
                } else if state.first > 32 {
                    state.chunks.removeFirst(state.first)
                    state.first = 0
                }
                state.held -= chunk.count
                var resume = false
                if state.loopPaused, !state.resumeAsked, state.held <= highWater / 2 {
                    state.resumeAsked = true
                    resume = true
                }
                return .chunk(chunk, resumeLoop: resume)
            }
            if let end = state.end { return .end(end) }
            return nil
        }
    }

    /// Returns once a chunk or the end has arrived.
    func waitForData() async {
        await wait { $0.first < $0.chunks.count || $0.end != nil }
    }

    /// The consumer is done with the stream: what is held is dropped, later deliveries too.
    func release() {
        state.withLock { state in
            state.released = true
            state.chunks = []
            state.first = 0
            state.held = 0
        }
    }

    /// Whether every byte has arrived (the transfer completed).
    var isComplete: Bool {
        state.withLock { state in
            if case .complete = state.end { return true }
            return false
        }
    }

    private func wait(until ready: @escaping (State) -> Bool) async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if ready(state) { return true }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}
