// Curlew — the response side of an exchange: collected by the loop, or streamed to a reader through one
// buffer whose high mark grows, within a session budget, for a reader that keeps up.

extension ExchangeStateMachine {
    /// How a streamed response's body ended.
    enum BodyEnd: Sendable {
        /// Every byte arrived.
        case complete
        // Indirect: the machine stays small for the buffered requests that never use it.
        indirect case failed(TransportError)
    }

    /// What the reader gets next.
    enum Next: Sendable {
        case chunk([UInt8], resumeLoop: Bool)
        case end(BodyEnd)
        /// Nothing yet.
        case pending
    }

    /// Whether curl's delivery may be taken.
    enum Room: Equatable, Sendable {
        case fits
        /// It does not fit, and the reader keeps up: ask the session's budget for this many bytes more
        /// mark (then ``ResponseSide/grow(by:)`` and look again).
        case grow(Int)
        /// It does not fit: curl pauses.
        case pause
    }

    /// When the reader is to be resumed after a delivery (ordered: the later case wins).
    enum Wake: Int, Comparable, Sendable {
        /// It is running, or a wake-up is already on its way.
        case none
        /// At the end of the loop's pass, once for everything the pass delivered.
        case endOfPass
        /// At once: half the mark is held, so the reader drains while curl keeps reading.
        case now

        static func < (lhs: Wake, rhs: Wake) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The response side: its state, the buffer of unread bytes and the high mark's growth.
    ///
    /// Bytes held for a streamed response are at most curl's receive buffer (a write it keeps while
    /// paused) plus the high mark. The mark starts at the floor and grows only for a reader that keeps
    /// up but runs late: when a delivery does not fit while the reader is waiting for bytes (suspended, or
    /// woken and not yet run), or after it found the buffer empty having let half the mark wait (it
    /// drains faster than the bytes come), the mark doubles, up to the cap and within the session's
    /// budget, instead of curl pausing — a pause costs a fast download far more than its own length,
    /// since the sender then waits on the reader's socket for the rest of the transfer. A reader that
    /// stops, or reads more slowly than the bytes come, is running (not waiting) when the buffer fills and
    /// never drains it: it holds at most the receive buffer plus the mark it had. Growth
    /// above the floor is given back to the budget when the exchange ends.
    struct ResponseSide: Sendable {
        enum State: CaseIterable, Sendable {
            /// A buffered response: the loop's sink keeps the body.
            case collecting
            /// A streamed response before its head.
            case awaitingHead
            /// The head arrived and curl delivers; the reader has not asked for a body byte yet, so a full
            /// buffer pauses the transfer (a reader that never reads never grows the mark).
            case headDelivered
            /// curl delivers, the reader reads; nothing is known of its pace yet.
            case streaming
            /// curl delivers, and the buffer has held half the mark since the reader last found it empty.
            case behind
            /// curl delivers, and the reader found the buffer empty after it had held half the mark: a
            /// delivery that does not fit grows the mark.
            case keepingUp
            /// curl is paused for room; no resumption asked yet.
            case paused
            /// The reader made room and asked the loop to resume.
            case resuming
            /// The end is recorded; the reader takes what is left, then the end.
            case ended
            /// The reader is gone: deliveries are dropped.
            case released
        }

        private(set) var state: State
        private(set) var buffer: ChunkBuffer<[UInt8]>
        /// The head, boxed: a buffered request's machine never holds one, and copies it on every start.
        private var headBox: Box<ResponseHead>?
        private(set) var end: BodyEnd?
        /// Largest chunk handed to the reader: deliveries are joined up to it.
        let chunkLimit: Int
        /// The high mark's floor and cap (equal: it never grows). A growth the session's budget refuses
        /// brings the cap down to the mark.
        let floor: Int
        private(set) var cap: Int
        /// High-mark bytes above the floor drawn from the session's budget.
        private(set) var grown = 0

        /// The most a streamed side may hold: one delivery past its high mark's cap.
        var ceiling: Int { cap + chunkLimit }
        /// Whether the high mark may grow above its floor.
        var grows: Bool { cap > floor }

        /// A response collected in memory by the loop.
        static var collected: ResponseSide { ResponseSide(state: .collecting, floor: 1, cap: 1, chunkLimit: 1) }

        /// A streamed response whose high mark starts at `floor` and may grow to `cap`.
        static func streamed(floor: Int, cap: Int, chunkLimit: Int) -> ResponseSide {
            ResponseSide(state: .awaitingHead, floor: floor, cap: cap, chunkLimit: chunkLimit)
        }

        /// A side in `state` holding `unread` bytes and, once ended, `end` (the table tests start here).
        init(state: State, floor: Int, cap: Int, chunkLimit: Int, unread: [UInt8] = [], end: BodyEnd? = nil) {
            self.state = state
            self.floor = max(1, floor)
            self.cap = max(self.floor, cap)
            self.chunkLimit = max(1, chunkLimit)
            buffer = ChunkBuffer(high: self.floor)
            if !unread.isEmpty { buffer.append(unread) }
            self.end = end
        }

        var isStreamed: Bool {
            switch state {
            case .collecting: false
            case .awaitingHead, .headDelivered, .streaming, .behind, .keepingUp, .paused, .resuming, .ended, .released: true
            }
        }

        /// The current high mark.
        var high: Int { buffer.high }

        // MARK: Loop side

        /// The final head arrived. Returns whether the reader waits for it (it is to be woken).
        mutating func deliver(head: ResponseHead) -> Bool {
            switch state {
            case .awaitingHead:
                headBox = Box(head)
                state = .headDelivered
                return true
            case .collecting, .headDelivered, .streaming, .behind, .keepingUp, .paused, .resuming, .ended, .released:
                return false
            }
        }

        /// Whether curl's delivery of `count` bytes may be taken: it fits; the mark is to grow first (the
        /// reader keeps up: it drained the buffer before, or it is `late`, waiting for bytes it has not
        /// run to take); or curl pauses for room.
        mutating func room(for count: Int, readerIsLate late: Bool) -> Room {
            switch state {
            case .keepingUp, .streaming, .behind:
                if buffer.fits(count) { return .fits }
                let growth = min(buffer.high, cap - buffer.high)
                if growth > 0, late || state == .keepingUp { return .grow(growth) }
                state = .paused
                return .pause
            case .headDelivered, .paused, .resuming:
                if buffer.fits(count) { return .fits }
                state = .paused
                return .pause
            case .collecting, .awaitingHead, .ended, .released:
                return .fits
            }
        }

        /// Whether `count` bytes fit now (after a growth, or without one); when not, curl pauses.
        mutating func hasRoom(for count: Int) -> Bool {
            switch state {
            case .headDelivered, .streaming, .behind, .keepingUp, .paused, .resuming:
                if buffer.fits(count) { return true }
                state = .paused
                return false
            case .collecting, .awaitingHead, .ended, .released:
                return true
            }
        }

        /// The session's budget granted `bytes` more high mark (0: none, and the mark stays where it is for
        /// the rest of the stream). The reader's evidence of keeping up is spent either way: it must find
        /// the buffer empty again to earn the next growth.
        mutating func grow(by bytes: Int) {
            buffer.high += bytes
            grown += bytes
            if bytes == 0 { cap = buffer.high }
            switch state {
            case .keepingUp: state = .behind
            case .collecting, .awaitingHead, .headDelivered, .streaming, .behind, .paused, .resuming, .ended, .released: break
            }
        }

        /// Copies body bytes in (after the room was found), joined to the last unread chunk while it has
        /// room. Dropped once the reader is gone.
        mutating func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
            guard takesBytes else { return false }
            buffer.append(copying: bytes, chunkLimit: chunkLimit)
            noteAppended()
            return true
        }

        /// Takes a chunk already copied (a bulk delivery, copied before the lock was taken).
        mutating func append(chunk: [UInt8]) -> Bool {
            guard takesBytes, !chunk.isEmpty else { return false }
            buffer.append(chunk)
            noteAppended()
            return true
        }

        private var takesBytes: Bool {
            switch state {
            case .headDelivered, .streaming, .behind, .keepingUp, .paused, .resuming: true
            case .collecting, .awaitingHead, .ended, .released: false
            }
        }

        private mutating func noteAppended() {
            switch state {
            case .streaming: if isHalfFull { state = .behind }
            case .collecting, .awaitingHead, .headDelivered, .behind, .keepingUp, .paused, .resuming, .ended, .released: break
            }
        }

        /// Whether half the mark is held: a reader that lets this much wait is behind.
        var isHalfFull: Bool { buffer.held >= buffer.high / 2 }

        /// Whether a waiting reader is to be woken at once rather than at the end of the loop's pass: half
        /// the cap is held. Below that a full buffer grows the mark for a reader still waiting, so earlier
        /// wake-ups would only cost: each one runs the reader beside the loop and the sender, which on a
        /// machine with few cores slows all three. (A mark that cannot grow, its cap reached or its budget
        /// refused, has its cap where the mark is: half the mark.)
        var wakesAtOnce: Bool { buffer.held >= cap / 2 }

        /// The body ended (first end wins). Returns whether this recorded it.
        @discardableResult
        mutating func end(_ end: BodyEnd) -> Bool {
            guard self.end == nil else { return false }
            switch state {
            case .collecting:
                return false
            case .awaitingHead, .headDelivered, .streaming, .behind, .keepingUp, .paused, .resuming:
                self.end = end
                state = .ended
                return true
            case .ended, .released:
                self.end = end
                return true
            }
        }

        /// The loop resumed the receive direction (the buffer had been full: the reader is behind).
        mutating func loopResumed() {
            switch state {
            case .paused, .resuming: state = .behind
            case .collecting, .awaitingHead, .headDelivered, .streaming, .behind, .keepingUp, .ended, .released: break
            }
        }

        // MARK: Reader side

        /// The head, taken out when `taking` (a long-lived reader keeps only what it needs of it).
        mutating func pollHead(taking: Bool) -> ResponseHead? {
            defer { if taking { headBox = nil } }
            return headBox?.value
        }

        /// The next chunk (and whether to ask the loop to resume), the end, or pending. A reader that finds
        /// the buffer empty after it had held half the mark keeps up.
        mutating func poll() -> Next {
            switch state {
            case .headDelivered: state = .streaming
            case .collecting, .awaitingHead, .streaming, .behind, .keepingUp, .paused, .resuming, .ended, .released: break
            }
            if let chunk = buffer.popFirst() {
                var resume = false
                switch state {
                case .paused:
                    if buffer.held <= buffer.low {
                        state = .resuming
                        resume = true
                    }
                case .collecting, .awaitingHead, .headDelivered, .streaming, .behind, .keepingUp, .resuming, .ended, .released:
                    break
                }
                return .chunk(chunk, resumeLoop: resume)
            }
            if let end { return .end(end) }
            switch state {
            case .behind: state = .keepingUp
            case .collecting, .awaitingHead, .headDelivered, .streaming, .keepingUp, .paused, .resuming, .ended, .released: break
            }
            return .pending
        }

        /// The growth to give back once the exchange is over; the mark stays as it is.
        mutating func takeGrowth() -> Int {
            defer { grown = 0 }
            return grown
        }

        /// Whether the reader has something to take.
        var hasNews: Bool { !buffer.isEmpty || end != nil }

        /// Whether the head (or the end) has arrived.
        var hasHeadNews: Bool { headBox != nil || end != nil }

        /// The reader is gone: what is held is dropped, later deliveries too. Returns whether the whole
        /// body had arrived.
        mutating func release() -> Bool {
            let complete: Bool
            switch end {
            case .complete?: complete = true
            case .failed?, nil: complete = false
            }
            switch state {
            case .collecting:
                return complete
            case .awaitingHead, .headDelivered, .streaming, .behind, .keepingUp, .paused, .resuming, .ended, .released:
                state = .released
                buffer.removeAll()
                return complete
            }
        }

        /// Bytes held unread.
        var held: Int { buffer.held }
    }
}
