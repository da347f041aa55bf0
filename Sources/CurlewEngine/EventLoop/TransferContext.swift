// Curlew — the loop thread's working state for one transfer in flight.

import CCurl
import CCurlShims
import HTTPTypes

#if canImport(Glibc)
import Glibc
#endif

/// Everything the loop thread keeps for one transfer while curl runs it.
///
/// Not `Sendable`: created on the loop thread when the machine starts the transfer, reached from
/// curl's callbacks through an unretained pointer (the thread's table of running contexts holds it),
/// and dropped when the transfer leaves curl. Its state is loop-thread only and never accessed
/// re-entrantly, so it goes without dynamic exclusivity checks (measured: they cost about 400
/// instructions per request).
final class TransferContext {
    /// The state machine's identifier for this exchange.
    let id: TransferID
    let exchange: Exchange
    let handle: EasyHandle
    /// What the handle carried from the pool beyond the session defaults.
    let residue: HandleResidue
    /// What it carries once this request's options are set: a plain request's shape, or nil when it
    /// must be reset before another request (see ``HandleResidue``).
    @exclusivity(unchecked) var residueAfter: HandleResidue?
    /// The multi handle running this exchange.
    let shard: MultiShard
    @exclusivity(unchecked) var headerList: UnsafeMutablePointer<curl_slist>?
    /// For tiny bodies only: a malloc'd copy whose address stays put while curl sends it.
    @exclusivity(unchecked) var ownedBody: UnsafeMutableRawPointer?
    @exclusivity(unchecked) var head: ResponseHeadParser
    /// A buffered response's body as it arrives (a streamed response's goes to its exchange).
    @exclusivity(unchecked) var sink = MemoryBodySink()
    /// Where the read callback takes a request body from (bodies that are not one block of memory).
    @exclusivity(unchecked) var upload: UploadFeed?
    /// How a streamed response's end is seen (loop thread only).
    @exclusivity(unchecked) var framing = StreamFraming.open
    let maxBodyBytes: Int
    @exclusivity(unchecked) private(set) var receivedBodyBytes = 0
    /// A failure the engine itself detected inside a callback (curl then reports a write error).
    @exclusivity(unchecked) var failure: TransportError?
    /// Decodes a buffered body's `Content-Encoding` (gzip, deflate) as it arrives: libcurl, which could
    /// decode it, accepts a coded stream that stops before its end as a whole body.
    @exclusivity(unchecked) var decoder: ContentDecoder?
    /// Bytes of body buffer reported to the engine's counters so far.
    @exclusivity(unchecked) var reportedBufferBytes = 0
    let counters: EngineCounters
    /// When bytes moved, for the idle timeout.
    @exclusivity(unchecked) private var activity: ActivityClock
    var startedAt: UInt64 { activity.started }
    /// When the first header line arrived, where it is kept (0 otherwise).
    var firstReceivedAt: UInt64 { activity.firstReceive }
    /// This transfer's part in its key's connections (opener, probe, attached, opened a socket), which
    /// the loop's ``ConnectionLedger`` decides on. Kept here rather than in the ledger: curl's callbacks
    /// reach the transfer through this context, where a table of transfers in the ledger would cost a
    /// lookup per transfer and callback.
    @exclusivity(unchecked) var connection: LoopThread.Ledger.Transfer
    /// Whether curl opened a socket for this transfer (a new connection, rather than a reused one).
    var openedSocket: Bool { connection.openedSocket }
    /// With ``CurlQuirks/pausedTransferSocketStaysReadable`` only (see `LoopThread.holdReads(of:)`): the
    /// socket curl last named for this transfer, whether the transfer is paused for receiving, and the
    /// socket whose reads the loop holds meanwhile (-1: none).
    @exclusivity(unchecked) var socket: Int32 = -1
    @exclusivity(unchecked) var receivePaused = false
    @exclusivity(unchecked) var heldReadSocket: Int32 = -1
    /// The read callback has handed curl the request body's end.
    @exclusivity(unchecked) var requestBodyEnded = false
    /// Where the watch for a response whole before its request body stands (libcurl before 8.1.1 only).
    @exclusivity(unchecked) var earlyAnswer: EarlyAnswerWatch
    /// How long the transfer waited between submission and its start.
    let queuedTime: Duration
    /// Where a call reporting progress is told of this transfer's counts (nil for nearly every transfer).
    let progress: ProgressReporter?
    /// Where the coalescing rule of progress reports stands.
    @exclusivity(unchecked) var coalescing = ProgressCoalescing()
    /// Body bytes of a streamed response as they came, without HTTP/1.1 chunk framing (which the engine
    /// undoes itself there, so curl's count would include it).
    @exclusivity(unchecked) var streamedBodyBytes = 0
    /// The arrays a streamed response's bulk deliveries are copied into (from the first such delivery).
    @exclusivity(unchecked) var chunkStorage: ChunkRecycler?
    /// How many times the receive direction paused because the reader was behind (for telemetry).
    @exclusivity(unchecked) var receivePauses = 0
    /// How many connections this transfer opened, read once from curl when it ends.
    private(set) lazy var connectionsOpened: Int = handle.connectionsOpened

    init(
        id: TransferID, exchange: Exchange, handle: EasyHandle, residue: HandleResidue, shard: MultiShard,
        role: ConnectionRole, configuration: SessionConfiguration, counters: EngineCounters
    ) {
        self.id = id
        self.residue = residue
        connection = LoopThread.Ledger.Transfer(id: id, role: role)
        self.exchange = exchange
        self.handle = handle
        self.shard = shard
        self.head = ResponseHeadParser(maxHeadBytes: configuration.effectiveMaxResponseHeaderSize)
        // A streamed body has no limit unless the request sets one; the reader enforces it (on decoded bytes).
        self.maxBodyBytes =
            exchange.streamsResponse
            ? Int.max : exchange.request.request.options.maxResponseBodySize ?? configuration.maxResponseBodySize
        self.counters = counters
        progress = exchange.request.request.options.progressReporter
        let now = shard.thread.now
        earlyAnswer =
            shard.thread.defaults.quirks.earlyAnswerStallsHTTP2Upload && exchange.request.request.body != nil
                && shard.thread.defaults.maySpeakHTTP2(exchange.request.poolKey) ? .watching : .off
        activity = ActivityClock(started: now)
        queuedTime = .nanoseconds(Int64(clamping: now &- min(now, exchange.submitted)))
    }

    deinit {
        // A body not handed to a response (a failed or cancelled transfer) is freed here.
        sink.release()
    }

    /// Called from the header callback. Returns false to make curl abort the exchange.
    func headerLine(_ line: UnsafeRawBufferPointer) -> Bool {
        let now = shard.thread.now
        activity.lastReceive = now
        if activity.firstReceive == 0, shard.thread.defaults.quirks.firstByteWaitsForTheBody { activity.firstReceive = now }
        if head.isComplete, exchange.streamsResponse { noteStreamedTrailer() }
        switch head.consume(line) {
        case .more:
            return true
        case .complete:
            shard.thread.noteResponseHead(of: self, http2: head.isHTTP2)
            if earlyAnswer == .watching { queueEarlyAnswerCheck() }
            if exchange.streamsResponse {
                deliverHead()
                return true
            }
            if head.hasContentEncoding, !setUpDecoding() { return false }
            // Content-Length is the server's word, and under a Content-Encoding it is the compressed
            // size: reserve from it only for unencoded bodies, and never more than 1 MiB up front.
            if let length = head.contentLength, !head.hasContentEncoding, exchange.request.request.method != .head {
                guard length <= maxBodyBytes else {
                    failure = exchange.request.error(
                        .bodyTooLarge, "the response announces \(length) bytes; the limit is \(maxBodyBytes)")
                    return false
                }
                sink.expect(length: length, reserve: min(length, 1 << 20))
                updateBufferCounter()
            }
            return true
        case .failure(let code, let message):
            failure = exchange.request.error(code, message)
            return false
        }
    }

    /// Called from the write callback with body bytes as they came (their coding undone here for a
    /// buffered body, by the reader for a streamed one). Returns what the callback answers: the count
    /// taken, 0 to abort the transfer, or curl's pause value.
    func bodyBytes(_ bytes: UnsafeRawBufferPointer) -> Int {
        activity.lastReceive = shard.thread.now
        if earlyAnswer == .watching { queueEarlyAnswerCheck() }
        if exchange.streamsResponse { return streamBytes(bytes) }
        if let decoder { return decode(bytes, with: decoder) }
        return store(bytes)
    }

    /// Keeps decoded body bytes, within the body limit.
    func store(_ bytes: UnsafeRawBufferPointer) -> Int {
        receivedBodyBytes += bytes.count
        guard receivedBodyBytes <= maxBodyBytes else {
            failure = exchange.request.error(
                .bodyTooLarge, "the decoded response body exceeds the limit of \(maxBodyBytes) bytes")
            return 0
        }
        guard sink.write(bytes) else {
            failure = exchange.request.error(.curl, "out of memory storing the response body")
            return 0
        }
        if sink.bufferedBytes != reportedBufferBytes { updateBufferCounter() }
        return bytes.count
    }

    /// When a byte last moved either way, or the connection was established. Sent bytes are seen by
    /// polling curl's upload count here (an in-memory body is sent without callbacks), so a moving upload
    /// counts from this check on. While a new connection is still being made the answer is `now`: the
    /// connect timeout governs that phase, not the idle timeout.
    func lastActivity(now: UInt64) -> UInt64 {
        var connected = activity.started
        if openedSocket {
            var established: curl_off_t = 0
            let phase = exchange.request.poolKey.isHTTPS ? CURLINFO_APPCONNECT_TIME_T : CURLINFO_CONNECT_TIME_T
            _ = curlew_easy_getinfo_off(handle.raw, phase, &established)
            guard established > 0 else { return now }
            connected = activity.started &+ UInt64(established) &* 1000
        }
        var uploaded: curl_off_t = 0
        _ = curlew_easy_getinfo_off(handle.raw, CURLINFO_SIZE_UPLOAD_T, &uploaded)
        if uploaded != activity.lastUploadCount {
            activity.lastUploadCount = uploaded
            activity.lastUpload = now
        }
        return max(activity.lastReceive, activity.lastUpload, connected)
    }

    private func updateBufferCounter() {
        let now = sink.bufferedBytes
        counters.bufferAdjust(by: now - reportedBufferBytes)
        reportedBufferBytes = now
    }

    /// Returns this transfer's buffer bytes to the counters; called once when it leaves the loop.
    func releaseBufferCounter() {
        counters.bufferAdjust(by: -reportedBufferBytes)
        reportedBufferBytes = 0
    }

    /// Frees the header list and the copy of a tiny body, and closes a file body, once curl is done with
    /// the handle.
    func releaseRequestResources() {
        // One block (see ``HeaderList``).
        free(headerList)
        headerList = nil
        if let ownedBody { free(ownedBody) }
        ownedBody = nil
        upload?.close()
        upload = nil
    }
}

/// When a transfer started and when its bytes last moved (monotonic nanoseconds), for the idle timeout.
struct ActivityClock {
    /// When curl started the transfer.
    let started: UInt64
    /// When a byte last arrived; the start time until then.
    var lastReceive: UInt64
    /// When the first header line arrived, 0 before; kept only where libcurl's time to first byte waits
    /// for the body (``CurlQuirks/firstByteWaitsForTheBody``).
    var firstReceive: UInt64 = 0
    /// Request-body bytes curl had sent at the last idle check, and when that count last moved.
    var lastUploadCount: curl_off_t = 0
    var lastUpload: UInt64

    init(started: UInt64) {
        self.started = started
        lastReceive = started
        lastUpload = started
    }
}
