// Curlew — the request side of an exchange: none, memory, a file, or a stream body's producer writing into
// one buffer that curl's read callback drains, run again from its first byte when curl rewinds.

extension ExchangeStateMachine {
    /// What curl's read callback hands curl.
    enum Read: Equatable, Sendable {
        /// This many bytes were copied.
        case bytes(Int)
        /// None are held yet: pause the send direction until a write resumes it.
        case wait
        /// The body is complete (and its length matched).
        case end
        /// The body failed; ``RequestSide/failure`` says why.
        case failed
    }

    /// What a producer's write leads to.
    struct WriteOutcome: Sendable {
        /// Ask the loop to resume the send direction (the read callback found nothing before).
        var resumeLoop = false
        /// The producer waits for room before its next write.
        var mustWait = false
        var error: TransportError?
    }

    /// The request side. Each run of a stream body's producer is a generation: when curl rewinds the
    /// body (a retry on a fresh connection) a replayable stream starts a new one, drops what is held, and
    /// the old producer's writes fail so that a new run can start from the first byte.
    struct RequestSide: Sendable {
        enum State: CaseIterable, Sendable {
            /// No body.
            case none
            /// Bytes in memory, sent by curl without the exchange.
            case memory
            /// A file (or segments), read by the loop without the exchange.
            case file
            /// A stream body's producer writes; curl takes what is held.
            case producing
            /// The producer waits for room.
            case full
            /// curl found nothing to send and paused the send direction; no resumption asked yet.
            case starved
            /// A write (or the end) asked the loop to resume sending.
            case resuming
            /// The producer returned: curl takes what is left, then the end.
            case finished
            /// The producer failed (or wrote past its length); the transfer fails when curl next reads.
            case failed
            /// The exchange is over: writes fail, nothing more is taken.
            case closed
        }

        private(set) var state: State
        private(set) var buffer: ChunkBuffer<ArraySlice<UInt8>>
        /// The declared length of a stream body, if any.
        let length: Int?
        /// Whether a stream body can be produced again from its first byte.
        let replayable: Bool
        private(set) var generation = 0
        /// Bytes written and taken in this generation.
        private(set) var produced = 0
        private(set) var taken = 0
        /// Why the body failed, boxed: the machine stays small for the requests that never use it.
        private var failureBox: Box<TransportError>?
        var failure: TransportError? { failureBox?.value }

        /// A body curl sends without the exchange: none, memory or a file.
        static func fixed(_ state: State) -> RequestSide { RequestSide(state: state, high: 1, length: nil, replayable: true) }

        /// A stream body's hand-over, holding up to `high` bytes before a write waits.
        static func stream(high: Int, length: Int?, replayable: Bool) -> RequestSide {
            RequestSide(state: .producing, high: high, length: length, replayable: replayable)
        }

        /// A side in `state` holding `unsent` bytes (the table tests start here).
        init(state: State, high: Int, length: Int?, replayable: Bool, unsent: [UInt8] = []) {
            self.state = state
            buffer = ChunkBuffer(high: high)
            self.length = length
            self.replayable = replayable
            if !unsent.isEmpty {
                buffer.append(unsent[...])
                produced = unsent.count
            }
        }

        var isStream: Bool {
            switch state {
            case .none, .memory, .file: false
            case .producing, .full, .starved, .resuming, .finished, .failed, .closed: true
            }
        }

        var hasFailed: Bool {
            switch state {
            case .failed: true
            case .none, .memory, .file, .producing, .full, .starved, .resuming, .finished, .closed: false
            }
        }

        var isClosed: Bool {
            switch state {
            case .closed: true
            case .none, .memory, .file, .producing, .full, .starved, .resuming, .finished, .failed: false
            }
        }

        var held: Int { buffer.held }

        // MARK: Producer side

        /// Why a write of `generation` cannot be taken, if it cannot.
        private func refusal(_ generation: Int) -> TransportError? {
            switch state {
            case .closed:
                return TransportError(.cancelled, message: "the exchange this request body belongs to has ended")
            case .finished where self.generation == generation:
                // A writer kept past its producer's return (it is Sendable): the body has ended.
                return TransportError(.invalidBody, message: "the request body was written to after its producer returned")
            case .none, .memory, .file, .producing, .full, .starved, .resuming, .finished, .failed:
                break
            }
            if self.generation != generation {
                return TransportError(.cancelled, message: "the request body is being sent again from its first byte")
            }
            return failure
        }

        /// Asks for the send direction to be resumed when curl is paused for bytes.
        private mutating func askResume() -> Bool {
            switch state {
            case .starved:
                state = .resuming
                return true
            case .none, .memory, .file, .producing, .full, .resuming, .finished, .failed, .closed:
                return false
            }
        }

        /// The producer of `generation` wrote `chunk`.
        mutating func write(_ chunk: ArraySlice<UInt8>, generation: Int) -> WriteOutcome {
            if let error = refusal(generation) { return WriteOutcome(error: error) }
            if let length, produced + chunk.count > length {
                let error = TransportError(
                    .bodyLengthMismatch, message: "the request body's producer wrote more than the \(length) bytes it declared")
                return WriteOutcome(resumeLoop: fail(error), error: error)
            }
            guard !chunk.isEmpty else { return WriteOutcome() }
            buffer.append(chunk)
            produced += chunk.count
            return WriteOutcome(resumeLoop: askResume(), mustWait: buffer.isFull)
        }

        /// The producer of `generation` is about to wait for room: false (no wait) when there is room,
        /// the exchange is over or the generation was replaced.
        mutating func producerWaitsForRoom(generation: Int) -> Bool {
            guard self.generation == generation, buffer.held >= buffer.low else { return false }
            switch state {
            case .producing, .resuming:
                state = .full
                return true
            case .full:
                return true
            case .none, .memory, .file, .starved, .finished, .failed, .closed:
                return false
            }
        }

        /// The producer of `generation` returned. Returns whether the loop must be asked to resume.
        mutating func finish(generation: Int) -> Bool {
            guard self.generation == generation else { return false }
            switch state {
            case .producing, .full, .starved, .resuming:
                if let length, produced != length {
                    return fail(
                        TransportError(
                            .bodyLengthMismatch,
                            message: "the request body's producer wrote \(produced) of the \(length) bytes it declared"))
                }
                let resume = askResume()
                state = .finished
                return resume
            case .none, .memory, .file, .finished, .failed, .closed:
                return false
            }
        }

        /// The producer of `generation` failed. Returns whether the loop must be asked to resume (to fail
        /// the transfer); false when the exchange is over, the generation was replaced or it had failed.
        mutating func fail(generation: Int, _ error: TransportError) -> Bool {
            guard self.generation == generation else { return false }
            return fail(error)
        }

        private mutating func fail(_ error: TransportError) -> Bool {
            switch state {
            case .producing, .full, .starved, .resuming, .finished:
                let resume = askResume()
                failureBox = Box(error)
                state = .failed
                return resume
            case .none, .memory, .file, .failed, .closed:
                return false
            }
        }

        /// Whether the producer of `generation`, having ended its run, waits for curl to ask for the body
        /// again (false: the exchange is over or a new generation has started).
        func producerWaitsForReplay(after generation: Int) -> Bool {
            guard self.generation == generation else { return false }
            switch state {
            case .closed: return false
            case .none, .memory, .file, .producing, .full, .starved, .resuming, .finished, .failed: return true
            }
        }

        // MARK: Loop side

        /// Copies up to `capacity` bytes into curl's `buffer`. Returns what to tell curl and whether a
        /// producer waiting for room is to be resumed now (it refills while curl sends).
        mutating func read(into target: UnsafeMutableRawPointer, capacity: Int) -> (Read, resumeProducer: Bool) {
            switch state {
            case .closed, .failed:
                return (.failed, false)
            case .none, .memory, .file:
                return (.end, false)
            case .producing, .full, .starved, .resuming, .finished:
                break
            }
            // A stream of declared length keeps its last byte back until its producer has returned: only
            // then is the length known to be right, and curl, once it has every byte, ends the upload.
            var capacity = capacity
            if let length, !isFinished { capacity = min(capacity, max(0, length - 1 - taken)) }
            let copied = buffer.copy(into: target, capacity: capacity)
            taken += copied
            var resumeProducer = false
            if case .full = state, buffer.held < buffer.low {
                state = .producing
                resumeProducer = true
            }
            if copied > 0 { return (.bytes(copied), resumeProducer) }
            if isFinished { return (.end, resumeProducer) }
            state = .starved
            return (.wait, resumeProducer)
        }

        private var isFinished: Bool {
            switch state {
            case .finished: true
            case .none, .memory, .file, .producing, .full, .starved, .resuming, .failed, .closed: false
            }
        }

        /// The loop resumed the send direction after a write asked it to.
        mutating func loopResumed() {
            switch state {
            case .resuming, .starved: state = .producing
            case .none, .memory, .file, .producing, .full, .finished, .failed, .closed: break
            }
        }

        /// curl rewinds the body to its first byte. A stream curl has taken nothing from stays as it is; a
        /// replayable one starts a new generation (its producer runs again); any other fails. Returns
        /// whether the rewind succeeded and whether a waiting producer is to be resumed.
        mutating func rewind() -> (rewound: Bool, resumeProducer: Bool) {
            if taken == 0 { return (true, false) }
            switch state {
            case .closed:
                return (false, false)
            case .none, .memory, .file:
                return (true, false)
            case .producing, .full, .starved, .resuming, .finished, .failed:
                break
            }
            guard replayable else { return (false, false) }
            generation += 1
            buffer.removeAll()
            produced = 0
            taken = 0
            failureBox = nil
            state = .producing
            return (true, true)
        }

        /// The exchange ended: writes fail from now on. Returns whether a waiting producer is to be
        /// resumed.
        mutating func close() -> Bool {
            switch state {
            case .none, .memory, .file:
                return false
            case .closed:
                return false
            case .producing, .full, .starved, .resuming, .finished, .failed:
                state = .closed
                buffer.removeAll()
                return true
            }
        }
    }
}
