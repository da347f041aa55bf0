// Curlew — the loop thread's side of streamed bodies: curl's write, read, seek and trailer callbacks.

import CCurl
import CCurlShims
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

extension TransferContext {
    // MARK: Streamed response

    /// The final head of a streamed response is complete: the reader gets it, the machine learns that
    /// the total timeout is over (unless the request has it cover the body too).
    func deliverHead() {
        let head = ResponseBuilder.head(for: self)
        if exchange.deliver(head: head) { shard.thread.pass.responseWakes.append(exchange) }
        if !exchange.request.request.options.timeoutCoversBody { shard.thread.pass.transferEvents.append(.headArrived(id)) }
        let code = head.status.code
        if exchange.request.request.method == .head || code == 204 || code == 304 {
            endStream()
        } else if self.head.isChunked, !self.head.isHTTP2 {
            framing = .chunked(ChunkedBodyDecoder())
        } else if let length = self.head.contentLength {
            framing = .length(length)
            if length == 0 { endStream() }
        }
    }

    /// Body bytes of a streamed response: handed to the reader, or the receive direction pauses. The
    /// engine follows the framing itself so the reader learns of the body's end as soon as it arrives,
    /// even while the request body is still being sent (see ``ChunkedBodyDecoder``).
    func streamBytes(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard exchange.hasRoom(for: bytes.count) else {
            receivePauses &+= 1
            shard.thread.pass.transferEvents.append(.paused(id, .receive))
            return Int(curlew_write_pause)
        }
        var wake = ExchangeStateMachine.Wake.none
        switch framing {
        case .chunked(var decoder):
            var trailerFailure = false
            let event = decoder.decode(
                bytes,
                data: { piece in
                    streamedBodyBytes += piece.count
                    wake = max(wake, exchange.append(piece, storage: &chunkStorage))
                },
                trailer: { line in
                    // Counted against the head limit, as libcurl's own trailers are.
                    if case .failure = head.consume(line) { trailerFailure = true }
                    return !trailerFailure
                })
            framing = .chunked(decoder)
            switch event {
            case .more:
                break
            case .end:
                endStream()
            case .failure(let reason):
                failure =
                    trailerFailure
                    ? exchange.request.error(.headersTooLarge, "the response head and trailers exceed the limit of \(head.maxHeadBytes) bytes")
                    : exchange.request.error(.invalidResponse, "the response's chunked framing is broken: \(reason)")
                return 0
            }
        case .length(let remaining) where bytes.count > remaining:
            // Never a body longer than its Content-Length (libcurl stops at it): libcurl 7.88 was seen
            // handing bytes of a paused stream over twice (the soak; see RELIABILITY.md).
            failure = exchange.request.error(
                .invalidResponse, "libcurl delivered more body bytes than the response's Content-Length")
            return 0
        case .length(let remaining):
            streamedBodyBytes += bytes.count
            wake = exchange.append(bytes, storage: &chunkStorage)
            let left = remaining - bytes.count
            framing = .length(left)
            // Over HTTP/2 trailers may still follow the data: the body ends early only for a request still
            // sending its own (where waiting for the exchange's end could wait for ever).
            if left <= 0, !head.isHTTP2 || upload?.isStream == true { endStream() }
        case .open, .ended:
            streamedBodyBytes += bytes.count
            wake = exchange.append(bytes, storage: &chunkStorage)
        }
        switch wake {
        case .none: break
        case .endOfPass: shard.thread.pass.responseWakes.append(exchange)
        case .now: exchange.wake()
        }
        return bytes.count
    }

    /// Over HTTP/2, trailer lines arrive when the stream closes: the body has ended, which the reader
    /// learns at the end of this pass (the lines come one call each).
    func noteStreamedTrailer() {
        guard head.isHTTP2, framing != .ended, exchange.streamsResponse else { return }
        framing = .ended
        shard.thread.pass.trailerEnds.append(self)
    }

    /// The body ended before the transfer did (the request body may still be on its way).
    func endStream() {
        framing = .ended
        // The reader may finish before curl ends the transfer: its last update must see these counts.
        recordFinalProgress()
        if exchange.endBody(.complete, trailers: head.makeTrailers()) { shard.thread.pass.responseWakes.append(exchange) }
    }

    // MARK: Request bodies through the read callback

    /// Fills curl's upload buffer: the count copied, 0 at the end, or curl's pause or abort value.
    func readBody(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        let result = fillBody(into: buffer, capacity: capacity)
        if result == 0 { requestBodyEnded = true }
        // Over HTTP/2 the loop lets curl read once more after this pass (see `LoopThread.runAfterUploadEnds()`).
        if result == 0, shard.thread.defaults.quirks.endedStreamNeedsAnotherRun,
            shard.thread.defaults.maySpeakHTTP2(exchange.request.poolKey)
        {
            shard.thread.pass.uploadEnds.append(self)
        }
        return result
    }

    private func fillBody(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        guard var feed = upload else { return Int(curlew_read_abort) }
        defer { upload = feed }
        switch feed.source {
        case .memory(let data):
            let count = min(capacity, data.count - feed.sent)
            guard count > 0 else { return 0 }
            data.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { buffer.copyMemory(from: base + feed.sent, byteCount: count) }
            }
            feed.sent += count
            return count
        case .file(let descriptor, let region):
            return readFile(descriptor, region, feed: &feed, into: buffer, capacity: capacity)
        case .segments(let segments):
            return readSegments(segments, feed: &feed, into: buffer, capacity: capacity)
        case .stream:
            // A producer waiting for room is resumed at once, not at the end of the pass: it refills while
            // curl sends the rest.
            switch exchange.read(into: buffer, capacity: capacity) {
            case .bytes(let count):
                feed.sent += count
                return count
            case .wait:
                shard.thread.pass.transferEvents.append(.paused(id, .send))
                return Int(curlew_read_pause)
            case .end:
                return 0
            case .failed:
                failure =
                    exchange.requestFailure
                    ?? exchange.request.error(.cancelled, "the request body's stream ended before its last byte")
                return Int(curlew_read_abort)
            }
        }
    }

    /// Reads the next bytes of a file body straight into curl's buffer. A file that turns out shorter,
    /// or (when the body is the whole file) longer, than when the body was made fails the transfer
    /// before its last byte is sent.
    private func readFile(
        _ descriptor: Int32, _ region: FileRegion, feed: inout UploadFeed, into buffer: UnsafeMutableRawPointer,
        capacity: Int
    ) -> Int {
        let count = min(capacity, region.length - feed.sent)
        guard count > 0 else { return 0 }
        guard readRegion(descriptor, region, at: feed.sent, count: count, into: buffer) else { return Int(curlew_read_abort) }
        feed.sent += count
        return count
    }

    /// Reads `count` bytes of a file region from `position`; false, with `failure` set, when reading fails
    /// or the file turns out to have changed.
    private func readRegion(
        _ descriptor: Int32, _ region: FileRegion, at position: Int, count: Int, into buffer: UnsafeMutableRawPointer
    ) -> Bool {
        let (read, error) = region.read(descriptor, into: buffer, count: count, at: position)
        guard error == 0 else {
            failure = exchange.request.error(.invalidBody, "reading \(region.path) failed: \(FileRegion.describe(error))")
            return false
        }
        guard read == count else {
            failure = exchange.request.error(
                .bodyLengthMismatch,
                "\(region.path) ended after \(position + read) of the \(region.length) bytes it had when the body was made")
            return false
        }
        if position + read == region.length, let error = region.changeAtEnd(descriptor) {
            failure = exchange.request.error(error.code, error.message)
            return false
        }
        return true
    }

    /// Fills curl's buffer from the segments: bytes copied, files read in place, across segment ends. A file
    /// is opened when the read reaches it and closed when the read leaves it.
    private func readSegments(
        _ segments: [BodySegment], feed: inout UploadFeed, into buffer: UnsafeMutableRawPointer, capacity: Int
    ) -> Int {
        var filled = 0
        while filled < capacity, feed.segment < segments.count {
            let segment = segments[feed.segment]
            let within = feed.sent - feed.segmentStart
            if case .file(let region) = segment, feed.openSegment != feed.segment {
                feed.closeSegmentFile()
                guard let descriptor = openSegmentFile(region) else { return Int(curlew_read_abort) }
                feed.openDescriptor = descriptor
                feed.openSegment = feed.segment
                // An empty file is read by no call below: whether it changed is checked here.
                if region.length == 0, let error = region.changeAtEnd(descriptor) {
                    failure = exchange.request.error(error.code, error.message)
                    return Int(curlew_read_abort)
                }
            }
            guard within < segment.length else {
                feed.segmentStart += segment.length
                feed.segment += 1
                feed.closeSegmentFile()
                continue
            }
            let count = min(capacity - filled, segment.length - within)
            switch segment {
            case .bytes(let data):
                data.withUnsafeBytes { bytes in
                    if let base = bytes.baseAddress { (buffer + filled).copyMemory(from: base + within, byteCount: count) }
                }
            case .file(let region):
                guard readRegion(feed.openDescriptor, region, at: within, count: count, into: buffer + filled) else {
                    return Int(curlew_read_abort)
                }
            }
            filled += count
            feed.sent += count
        }
        return filled
    }

    /// Opens a segment's file for reading without ever blocking the loop: non-blocking, and refused unless
    /// it is still a regular file (a path replaced by a FIFO since the body was made would block).
    private func openSegmentFile(_ region: FileRegion) -> Int32? {
        let descriptor = Glibc.open(region.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            failure = exchange.request.error(.invalidBody, "cannot open \(region.path): \(FileRegion.describe(errno))")
            return nil
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            _ = Glibc.close(descriptor)
            failure = exchange.request.error(.invalidBody, "\(region.path) is no longer a regular file")
            return nil
        }
        return descriptor
    }

    /// Rewinds the body for curl: to a position for bytes and files; to the first byte for a stream,
    /// which starts its producer again when it is replayable (otherwise the transfer fails with
    /// `bodyNotReplayable`, unless curl took nothing from it yet).
    func seekBody(to offset: Int, origin: Int32) -> Int32 {
        guard var feed = upload, origin == SEEK_SET, offset >= 0 else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        defer { upload = feed }
        if exchange.sendsTrailers {
            // libcurl before 8.7.0 clears the trailer callback once it has sent the trailers: the body
            // sent again needs it again.
            _ = curlew_easy_setopt_trailer_callback(handle.raw, CurlCallbacks.trailers)
            handle.set(CURLOPT_TRAILERDATA, UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()))
        }
        switch feed.source {
        case .memory(let data):
            guard offset <= data.count else { return Int32(CURL_SEEKFUNC_FAIL) }
            feed.sent = offset
        case .file(_, let region):
            guard offset <= region.length else { return Int32(CURL_SEEKFUNC_FAIL) }
            feed.sent = offset
        case .segments(let segments):
            guard offset <= segments.reduce(0, { $0 + $1.length }) else { return Int32(CURL_SEEKFUNC_FAIL) }
            // The read finds the segment holding `offset` from the first one (and opens its file again).
            feed.closeSegmentFile()
            feed.sent = offset
            feed.segment = 0
            feed.segmentStart = 0
        case .stream:
            guard offset == 0 else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
            guard exchange.rewind() else {
                failure = exchange.request.error(
                    .bodyNotReplayable, "libcurl must send the request again on a new connection, and its body cannot be replayed")
                return Int32(CURL_SEEKFUNC_FAIL)
            }
            feed.sent = 0
        }
        return Int32(CURL_SEEKFUNC_OK)
    }

    /// The trailer fields, as a list libcurl frees.
    func trailerList(into list: UnsafeMutablePointer<UnsafeMutablePointer<curl_slist>?>) -> Int32 {
        guard let fields = exchange.trailerFields else { return Int32(CURL_TRAILERFUNC_OK) }
        var lines: UnsafeMutablePointer<curl_slist>?
        for field in fields {
            "\(field.name.rawName): \(field.value)".withCString { text in
                if let appended = curl_slist_append(lines, text) { lines = appended }
            }
        }
        list.pointee = lines
        return Int32(CURL_TRAILERFUNC_OK)
    }
}

/// Where a request body sent through the read callback comes from, and how much of it curl has taken.
/// Loop thread only.
struct UploadFeed {
    enum Source {
        /// Bytes in memory sent through the callback (chunked, for trailers).
        case memory(Data)
        /// An open file and the region of it sent.
        case file(Int32, FileRegion)
        /// A stream body, through the exchange's request side.
        case stream
        /// Bytes and files one after the other; a file is opened when the read reaches it.
        case segments([BodySegment])
    }

    let source: Source
    var sent = 0
    /// For segments: the segment holding byte `sent`, and where it starts in the body.
    var segment = 0
    var segmentStart = 0
    /// For segments: the open file, and the index of its segment (-1: none open).
    var openDescriptor: Int32 = -1
    var openSegment = -1

    init(_ source: Source) {
        self.source = source
    }

    var isStream: Bool {
        if case .stream = source { return true }
        return false
    }

    /// Closes a file body's descriptor.
    mutating func close() {
        if case .file(let descriptor, _) = source { _ = Glibc.close(descriptor) }
        closeSegmentFile()
    }

    /// Closes the file of the segment read last, if one is open.
    mutating func closeSegmentFile() {
        if openDescriptor >= 0 { _ = Glibc.close(openDescriptor) }
        openDescriptor = -1
        openSegment = -1
    }
}

/// How the engine follows a streamed response's framing to see its end.
enum StreamFraming {
    /// Until the transfer ends (no length, HTTP/2 without one, or an HTTP/1.0 body up to the close).
    case open
    /// This many bytes are left.
    case length(Int)
    /// HTTP/1.1 chunked, undone here.
    case chunked(ChunkedBodyDecoder)
    /// The consumer has been told the body ended.
    case ended

    static func != (lhs: StreamFraming, rhs: StreamFraming) -> Bool {
        switch (lhs, rhs) {
        case (.ended, .ended): false
        default: true
        }
    }
}

/// Something a callback learned about a transfer, told to the machine once curl returns.
enum TransferEvent {
    /// A callback paused this direction.
    case paused(TransferID, PauseDirection)
    /// A streamed response's head is complete.
    case headArrived(TransferID)
}
