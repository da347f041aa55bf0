// Curlew — the loop thread's working state for one transfer in flight.

import CCurl
import HTTPTypes

/// Everything the loop thread keeps for one transfer while curl runs it.
///
/// Confined to the loop thread: created there when the transfer starts, reached from curl's callbacks
/// through an unretained pointer (the loop's table of active transfers holds it), and dropped when the
/// transfer leaves the multi handle.
final class TransferContext {
    /// Position in the loop's table of active transfers, -1 when not in it.
    var activeIndex = -1
    let transfer: Transfer
    let handle: EasyHandle
    /// The multi handle running this transfer.
    let shard: MultiShard
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// For tiny bodies only: a malloc'd copy whose address stays put while curl sends it.
    var ownedBody: UnsafeMutableRawPointer?
    /// Loop thread only and never accessed re-entrantly, so without dynamic exclusivity checks.
    @exclusivity(unchecked) var head: ResponseHeadParser
    let sink: any ResponseBodySink
    let maxBodyBytes: Int
    private(set) var receivedBodyBytes = 0
    /// A failure the engine itself detected inside a callback (curl then reports a write error).
    var failure: TransportError?
    /// Bytes of body buffer reported to the engine's counters so far.
    var reportedBufferBytes = 0
    let counters: EngineCounters

    init(
        transfer: Transfer, handle: EasyHandle, shard: MultiShard, configuration: SessionConfiguration,
        counters: EngineCounters
    ) {
        self.transfer = transfer
        self.handle = handle
        self.shard = shard
        self.head = ResponseHeadParser(maxHeadBytes: configuration.maxResponseHeaderSize)
        self.sink = MemoryBodySink()
        self.maxBodyBytes = configuration.maxResponseBodySize
        self.counters = counters
    }

    /// Called from the header callback. Returns false to make curl abort the transfer.
    func headerLine(_ line: UnsafeRawBufferPointer) -> Bool {
        switch head.consume(line) {
        case .more:
            return true
        case .complete:
            // Content-Length is the server's word, and under a Content-Encoding it is the compressed
            // size: reserve from it only for unencoded bodies, and never more than 1 MiB up front.
            if let length = head.contentLength, !head.hasContentEncoding, transfer.request.request.method != .head {
                guard length <= maxBodyBytes else {
                    failure = transfer.request.error(
                        .bodyTooLarge, "the response announces \(length) bytes; the limit is \(maxBodyBytes)")
                    return false
                }
                sink.expect(length: length, reserve: min(length, 1 << 20))
                updateBufferCounter()
            }
            return true
        case .failure(let code, let message):
            failure = transfer.request.error(code, message)
            return false
        }
    }

    /// Called from the write callback with decoded body bytes. Returns false to abort the transfer.
    func bodyBytes(_ bytes: UnsafeRawBufferPointer) -> Bool {
        receivedBodyBytes += bytes.count
        guard receivedBodyBytes <= maxBodyBytes else {
            failure = transfer.request.error(
                .bodyTooLarge, "the decoded response body exceeds the limit of \(maxBodyBytes) bytes")
            return false
        }
        guard sink.write(bytes) else {
            failure = transfer.request.error(.curl, "out of memory storing the response body")
            return false
        }
        if sink.bufferedBytes != reportedBufferBytes { updateBufferCounter() }
        return true
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
}
