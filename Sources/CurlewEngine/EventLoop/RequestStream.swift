// Curlew — a streamed request body's hand-over from the producing task to the loop thread.

import HTTPTypes

/// The bytes a stream body's producer wrote and curl has not taken yet, with the producer's and the
/// loop's waits.
///
/// The producer (``RequestBodyWriter``) appends chunks and waits while ``highWater`` bytes are held; the
/// loop thread's read callback copies them into curl's upload buffer and, when none are left, pauses the
/// send direction until the next write asks the loop to resume it. One lock orders both sides.
///
/// Each run of the producer is a generation: when curl rewinds the body (a retry on a fresh connection)
/// the stream starts a new generation, drops what is held, and the old producer's writes fail so that
/// a new run can start from the first byte.
final class RequestStream: Sendable {
    /// What the read callback hands curl.
    enum Read: Equatable {
        /// This many bytes were copied.
        case bytes(Int)
        /// None are held yet: pause the send direction until a write resumes it.
        case wait
        /// The body is complete (and its length matched).
        case end
        /// The body failed; ``failure`` says why.
        case failed
    }

    private struct State {
        var chunks: [ArraySlice<UInt8>] = []
        /// Index of the first chunk curl has not fully taken, and bytes of it already taken.
        var first = 0
        var offset = 0
        var held = 0
        /// Bytes written and taken in this generation.
        var produced = 0
        var taken = 0
        var generation = 0
        var finished = false
        var trailers: HTTPFields?
        var failure: TransportError?
        /// The read callback paused the send direction; the next write (or the end) must resume it.
        var loopWaits = false
        var resumeAsked = false
        /// The exchange is over: writes fail, nothing more is taken.
        var closed = false
        /// The producer waiting for room.
        var writer: UnsafeContinuation<Void, Never>?
        /// The producer of a finished generation waiting to be told to run again (or that it is over).
        var idle: UnsafeContinuation<Void, Never>?
    }

    /// The declared length, if any.
    let length: Int?
    /// Most bytes held before a write waits.
    let highWater: Int
    private let state: Locked<State>

    init(length: Int?, highWater: Int) {
        self.length = length
        self.highWater = max(1, highWater)
        state = Locked(State())
    }

    // MARK: Producer side

    /// The current generation.
    var generation: Int { state.withLock { $0.generation } }

    /// Appends a chunk written by the producer of `generation`: whether the loop must be asked to resume
    /// the send direction, whether the producer must wait for room, and the error the write fails with.
    func write(_ chunk: ArraySlice<UInt8>, generation: Int) -> WriteOutcome {
        state.withLock { state -> WriteOutcome in
            if let error = Self.refusal(state, generation) { return WriteOutcome(error: error) }
            if let length, state.produced + chunk.count > length {
                let error = TransportError(
                    .bodyLengthMismatch,
                    message: "the request body's producer wrote more than the \(length) bytes it declared")
                state.failure = error
                return WriteOutcome(resumeLoop: Self.askResume(&state), error: error)
            }
            guard !chunk.isEmpty else { return WriteOutcome() }
            state.chunks.append(chunk)
            state.held += chunk.count
            state.produced += chunk.count
            return WriteOutcome(resumeLoop: Self.askResume(&state), mustWait: state.held >= highWater)
        }
    }

    /// What a write leads to.
    struct WriteOutcome {
        var resumeLoop = false
        var mustWait = false
        var error: TransportError?
    }

    /// Waits until the held bytes drop below the low-water mark, the exchange ends or the generation is
    /// replaced. Returns immediately when that is already so.
    func waitForRoom(generation: Int) async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.closed || state.generation != generation || state.held < highWater / 2 { return true }
                state.writer = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Wakes a producer waiting for room (its task was cancelled).
    func releaseWriter() {
        let writer = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            defer { state.writer = nil }
            return state.writer
        }
        writer?.resume()
    }

    /// The producer of `generation` finished. Returns whether the loop must be asked to resume.
    func finish(generation: Int, trailers: HTTPFields?) -> Bool {
        state.withLock { state in
            guard !state.closed, state.generation == generation else { return false }
            if let length, state.produced != length {
                state.failure = TransportError(
                    .bodyLengthMismatch,
                    message: "the request body's producer wrote \(state.produced) of the \(length) bytes it declared")
            }
            state.finished = true
            state.trailers = trailers
            return Self.askResume(&state)
        }
    }

    /// The producer of `generation` threw. Returns whether the loop must be asked to resume (to fail the
    /// transfer); false when the exchange is already over or the generation was replaced.
    func fail(generation: Int, _ error: TransportError) -> Bool {
        state.withLock { state in
            guard !state.closed, state.generation == generation, state.failure == nil else { return false }
            state.failure = error
            return Self.askResume(&state)
        }
    }

    /// After a generation finished: waits until curl asks for the body again (returns the new generation)
    /// or the exchange ends (returns nil).
    func waitForReplay(after generation: Int) async -> Int? {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.closed || state.generation != generation { return true }
                state.idle = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        return state.withLock { state in state.closed ? nil : state.generation }
    }

    /// Whether the exchange is over.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Why a write of `generation` cannot be taken, if it cannot.
    private static func refusal(_ state: State, _ generation: Int) -> TransportError? {
        if state.closed {
            return TransportError(.cancelled, message: "the exchange this request body belongs to has ended")
        }
        if state.generation != generation {
            return TransportError(.cancelled, message: "the request body is being sent again from its first byte")
        }
        return state.failure
    }

    /// Marks that the loop must be asked to resume the send direction, once per pause.
    private static func askResume(_ state: inout State) -> Bool {
        guard state.loopWaits, !state.resumeAsked else { return false }
        state.resumeAsked = true
        return true
    }

    // MARK: Loop side

    /// Copies up to `capacity` bytes into `buffer` for curl's read callback. Returns what to tell curl and
    /// the producer waiting for room, now that there is some: the caller resumes it at once, so it refills
    /// while curl sends.
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> (Read, writer: UnsafeContinuation<Void, Never>?) {
        state.withLock { state in
            if state.closed { return (.failed, nil) }
            if state.failure != nil { return (.failed, nil) }
            var copied = 0
            // A stream of declared length keeps its last byte back until its producer has returned: only
            // then is the length known to be right, and curl, once it has every byte, ends the upload.
            var capacity = capacity
            if let length, !state.finished { capacity = min(capacity, max(0, length - 1 - state.taken)) }
            while copied < capacity, state.first < state.chunks.count {
                let chunk = state.chunks[state.first]
                let count = min(chunk.count - state.offset, capacity - copied)
                chunk.withUnsafeBytes { bytes in
                    if let base = bytes.baseAddress {
                        (buffer + copied).copyMemory(from: base + state.offset, byteCount: count)
                    }
                }
                copied += count
                state.offset += count
                if state.offset == chunk.count {
                    state.chunks[state.first] = []
                    state.first += 1
                    state.offset = 0
                }
            }
            if state.first == state.chunks.count, state.first > 0 {
                state.chunks.removeAll(keepingCapacity: true)
                state.first = 0
            } else if state.first > 32 {
                state.chunks.removeFirst(state.first)
                state.first = 0
            }
            state.held -= copied
            state.taken += copied
            var writer: UnsafeContinuation<Void, Never>?
            if state.held < highWater / 2 {
                writer = state.writer
                state.writer = nil
            }
            if copied > 0 { return (.bytes(copied), writer) }
            if state.finished { return (.end, writer) }
            state.loopWaits = true
            state.resumeAsked = false
            return (.wait, writer)
        }
    }

    /// The loop resumed the send direction after a write asked it to.
    func loopResumed() {
        state.withLock { state in
            state.loopWaits = false
            state.resumeAsked = false
        }
    }

    /// Why the body failed, if it did.
    var failure: TransportError? { state.withLock { $0.failure } }

    /// The trailer fields of a finished body.
    var trailers: HTTPFields? { state.withLock { $0.trailers } }

    /// Bytes curl has taken in this generation.
    var taken: Int { state.withLock { $0.taken } }

    /// curl rewinds the body to its first byte. A replayable stream starts a new generation (the producer
    /// runs again); otherwise only a stream curl has taken nothing from may be rewound. Returns whether
    /// the rewind succeeded, and a waiting producer to wake.
    func rewind(replayable: Bool) -> (Bool, [UnsafeContinuation<Void, Never>]) {
        state.withLock { state in
            if state.taken == 0 { return (true, []) }
            guard replayable, !state.closed else { return (false, []) }
            state.generation += 1
            state.chunks = []
            state.first = 0
            state.offset = 0
            state.held = 0
            state.produced = 0
            state.taken = 0
            state.finished = false
            state.trailers = nil
            state.failure = nil
            state.loopWaits = false
            state.resumeAsked = false
            var waiting: [UnsafeContinuation<Void, Never>] = []
            if let writer = state.writer { waiting.append(writer) }
            if let idle = state.idle { waiting.append(idle) }
            state.writer = nil
            state.idle = nil
            return (true, waiting)
        }
    }

    /// The exchange ended (completed, failed, or curl stopped sending): writes fail from now on and any
    /// waiting producer is woken.
    func close() {
        let waiting = state.withLock { state -> [UnsafeContinuation<Void, Never>] in
            guard !state.closed else { return [] }
            state.closed = true
            state.chunks = []
            state.held = 0
            var waiting: [UnsafeContinuation<Void, Never>] = []
            if let writer = state.writer { waiting.append(writer) }
            if let idle = state.idle { waiting.append(idle) }
            state.writer = nil
            state.idle = nil
            return waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}
