// Curlew — the one buffer between a producer and a consumer: chunks in arrival order, their weight, and a
// high and a low mark.

/// What a ``ChunkBuffer`` holds: a chunk that knows its weight (bytes for bodies, 1 for an item), and an
/// empty value put in a taken chunk's place so that its storage is freed at once.
package protocol BufferedChunk {
    var weight: Int { get }
    static var empty: Self { get }
}

extension Array: BufferedChunk where Element == UInt8 {
    package var weight: Int { count }
    package static var empty: [UInt8] { [] }
}

extension ArraySlice: BufferedChunk where Element == UInt8 {
    package var weight: Int { count }
    package static var empty: ArraySlice<UInt8> { [] }
}

/// Chunks in arrival order with the weight they hold and a watermark strategy, as swift-nio's
/// `NIOAsyncSequenceProducer` has: a producer stops (curl pauses, a writer waits) once ``high`` is held
/// and goes on once the held weight falls to ``low``.
///
/// A value with no locks and no waiters: the ``ExchangeStateMachine`` keeps one per direction of a
/// transfer. The high mark may grow (see
/// ``ExchangeStateMachine/ResponseSide``); the low mark is half of it.
struct ChunkBuffer<Chunk: BufferedChunk> {
    private var chunks: [Chunk] = []
    /// Index of the first unread chunk: taking from the front moves it instead of shifting the array.
    private var first = 0
    /// The weight held.
    private(set) var held = 0
    /// The weight at which the producer stops.
    var high: Int

    init(high: Int) {
        self.high = max(1, high)
    }

    /// The weight at or below which a stopped producer goes on.
    var low: Int { high / 2 }
    var isEmpty: Bool { first == chunks.count }
    /// Whether the producer must stop.
    var isFull: Bool { held >= high }

    /// Whether `weight` more may be taken in: always into an empty buffer (one delivery may exceed the
    /// mark), otherwise while the mark is not passed.
    func fits(_ weight: Int) -> Bool { held == 0 || held + weight <= high }

    mutating func append(_ chunk: Chunk) {
        held += chunk.weight
        chunks.append(chunk)
    }

    /// The first chunk, taken out.
    mutating func popFirst() -> Chunk? {
        guard first < chunks.count else { return nil }
        let chunk = chunks[first]
        held -= chunk.weight
        advance()
        return chunk
    }

    /// Drops everything held.
    mutating func removeAll() {
        chunks = []
        first = 0
        held = 0
    }

    /// Steps past the first chunk, dropping its storage; compacts now and then.
    private mutating func advance() {
        chunks[first] = .empty
        first += 1
        if first == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            first = 0
        } else if first > 32 {
            chunks.removeFirst(first)
            first = 0
        }
    }
}

extension ChunkBuffer where Chunk == [UInt8] {
    /// Copies `bytes` in, joined to the last unread chunk while that stays within `chunkLimit` (fewer,
    /// larger chunks for the reader); a bulk delivery starts a chunk with room for the next ones.
    mutating func append(copying bytes: UnsafeRawBufferPointer, chunkLimit: Int) {
        guard !bytes.isEmpty else { return }
        held += bytes.count
        if first < chunks.count, chunks[chunks.count - 1].count + bytes.count <= chunkLimit {
            chunks[chunks.count - 1].append(contentsOf: bytes)
            return
        }
        var chunk: [UInt8] = []
        chunk.reserveCapacity(bytes.count >= 4096 ? max(chunkLimit, bytes.count) : bytes.count)
        chunk.append(contentsOf: bytes)
        chunks.append(chunk)
    }
}

extension ChunkBuffer where Chunk == ArraySlice<UInt8> {
    /// Copies up to `capacity` bytes from the front into `buffer` (a chunk partly taken keeps the rest).
    /// Returns the count copied.
    mutating func copy(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        var copied = 0
        while copied < capacity, first < chunks.count {
            let count = min(chunks[first].count, capacity - copied)
            chunks[first].withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { (buffer + copied).copyMemory(from: base, byteCount: count) }
            }
            copied += count
            if count == chunks[first].count {
                advance()
            } else {
                chunks[first].removeFirst(count)
            }
        }
        held -= copied
        return copied
    }
}

extension ChunkBuffer: Sendable where Chunk: Sendable {}
