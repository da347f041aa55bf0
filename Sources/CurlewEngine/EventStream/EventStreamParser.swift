// Curlew — the WHATWG event-stream parser (HTML "Parsing an event stream" and "Interpreting an event
// stream"), incremental, on bytes as they arrive.

/// The WHATWG event-stream parser (HTML §9.2.6), incremental, on bytes as they arrive.
///
/// Feed it a response body's chunks in order with ``parse(_:into:)``; it appends every event the
/// chunk completes. It follows the specification exactly:
///
/// - One byte order mark (EF BB BF) is stripped at the start of the stream only, even when it arrives
///   split across chunks; a later one is content.
/// - Lines end at CRLF, LF or CR. A CR at the end of one chunk and an LF at the start of the next are
///   one line end.
/// - Each line is decoded as UTF-8, invalid bytes becoming U+FFFD. Lines are buffered as bytes, so a
///   multi-byte character split across chunks decodes whole.
/// - An empty line dispatches the event; a line starting with `:` is a comment. Otherwise the field
///   name is what precedes the first `:` (the whole line when there is none, with an empty value) and
///   the value what follows it, less one leading space.
/// - `event` sets the event type; `data` appends its value and an LF to the data buffer; `id` sets the
///   last event ID buffer unless the value contains U+0000 (an empty value clears it); `retry` sets the
///   reconnection time when the value is one or more ASCII digits (milliseconds, clamped to
///   ``maximumReconnectionTime``); other fields are ignored. Field names are case-sensitive.
/// - Dispatching first makes the last event ID buffer the stream's ``lastEventID`` (so a block with only
///   an `id` updates it), then, when the data buffer is empty, resets the data and type buffers and
///   dispatches nothing; otherwise it removes the data's last LF and creates a ``ServerSentEvent`` whose
///   type is the type buffer or `"message"` when that is empty.
///
/// At the end of the stream call ``finish()``: an incomplete event (no empty line after it) is
/// discarded, and the parser starts a new stream with the same ``lastEventID`` and
/// ``reconnectionTime``.
///
/// Two limits keep a hostile stream from growing memory without bound: an event whose data (its `data`
/// values joined with LF) would exceed `maxEventSize` bytes throws ``EventStreamError/eventTooLarge(limit:)``
/// (a `data` line is bounded by it alone, so one line may carry a whole event's data), and any other line
/// (`event`, `id`, `retry`, a comment, an unknown field) longer than `maxLineLength` bytes, not counting
/// its terminator, throws ``EventStreamError/lineTooLong(limit:)``. Both are thrown as soon as the bytes arrive, before the
/// line or the event ends. After throwing, every ``parse(_:into:)`` throws the same error again until
/// ``finish()``.
public struct EventStreamParser: Sendable {
    /// The default longest line other than a `data` line, 1 MiB.
    public static let defaultMaxLineLength = 1 << 20
    /// The default largest data of one event, 16 MiB.
    public static let defaultMaxEventSize = 16 << 20
    /// The longest reconnection time a `retry` field sets (24 hours): larger values are clamped to it.
    public static let maximumReconnectionTime: Duration = .seconds(86_400)
    /// ``maximumReconnectionTime`` in milliseconds, the unit of `retry`.
    static let maximumReconnectionMilliseconds = 86_400_000
    /// Buffers that grew beyond this many bytes for one long line or large event are released after it,
    /// so that an idle stream (of thousands open) holds little memory; smaller ones keep their capacity
    /// for the next line or event.
    private static let retainedBufferCapacity = 4096

    private static let lineFeed: UInt8 = 0x0A
    private static let carriageReturn: UInt8 = 0x0D
    static let colon: UInt8 = 0x3A
    private static let space: UInt8 = 0x20

    /// The longest line other than a `data` line, in bytes without its terminator.
    private let maxLineLength: Int
    /// The largest data of one event, in bytes.
    private let maxEventSize: Int

    /// The stream's last event ID: what a reconnection sends as `Last-Event-ID` and what each
    /// dispatched event carries as its ``ServerSentEvent/id``.
    ///
    /// An `id` field sets the last event ID buffer; the empty line that ends its block (whether or not
    /// that block dispatches an event) makes it the last event ID, as the specification's "dispatch the
    /// event" step does, so an `id` in an incomplete block at the end of a stream is not kept. It stays
    /// until a later block's `id` replaces it (an empty `id` clears it), across ``finish()``.
    ///
    /// Setting it (to resume a stream from an ID) sets the buffer too.
    public var lastEventID: String {
        get { committedEventID }
        set {
            committedEventID = newValue
            newEventID = nil
        }
    }

    /// The reconnection time of the last valid `retry` field (`nil` before any), clamped to
    /// ``maximumReconnectionTime``. A `retry` field takes effect at once, even in a block that never
    /// ends.
    public private(set) var reconnectionTime: Duration?

    /// The event source's last event ID string.
    private var committedEventID = ""
    /// The last event ID buffer when an `id` field set it since the last dispatch (`nil`: it equals
    /// ``committedEventID``).
    private var newEventID: String?
    /// The event type buffer.
    private var eventTypeBuffer = ""
    /// The data buffer as bytes (each `data` value followed by LF), decoded once at dispatch.
    private var dataBuffer: [UInt8] = []
    /// A valid `retry` value seen in the current block.
    private var blockRetry: Duration?
    /// The start of a line whose end has not arrived yet. Lines that lie whole inside a chunk are
    /// parsed from the chunk itself and never copied here.
    private var lineBuffer: [UInt8] = []
    /// The last chunk ended with a CR: an LF at the start of the next one belongs to that line end.
    private var skipsLineFeed = false
    /// Still at the start of the stream, where a byte order mark is stripped.
    private var checksByteOrderMark = true
    /// How many bytes of the byte order mark have arrived at the start of the stream.
    private var byteOrderMarkBytesSeen = 0
    /// The error thrown, until ``finish()``.
    private var failure: EventStreamError?
    /// Comments seen, when kept (nil: not kept), each with the count of events in the output array it
    /// came before (the text after the colon, decoded as UTF-8). The reader of an observed stream takes them.
    package var comments: [(before: Int, text: String)]?

    /// Creates a parser at the start of a stream.
    /// - Parameters:
    ///   - maxLineLength: The longest line other than a `data` line accepted, in bytes not counting its
    ///     terminator (a `data` line is bounded by `maxEventSize`).
    ///   - maxEventSize: The largest data of one event accepted, in bytes: its `data` values joined with LF.
    public init(maxLineLength: Int = defaultMaxLineLength, maxEventSize: Int = defaultMaxEventSize) {
        self.maxLineLength = max(0, maxLineLength)
        self.maxEventSize = max(0, maxEventSize)
    }

    /// Parses the next bytes, appending each dispatched event.
    /// - Parameters:
    ///   - chunk: The next bytes of the stream.
    ///   - events: Where the events this chunk completes are appended, in order.
    /// - Throws: ``EventStreamError/lineTooLong(limit:)`` or ``EventStreamError/eventTooLarge(limit:)``
    ///   (the events dispatched before the offending line are appended), or the error thrown before if
    ///   the parser has failed and ``finish()`` was not called since.
    public mutating func parse(_ chunk: ArraySlice<UInt8>, into events: inout [ServerSentEvent]) throws(EventStreamError) {
        let error = chunk.withUnsafeBufferPointer { bytes in consume(bytes, into: &events) }
        if let error { throw error }
    }

    /// Convenience: parses the next bytes and returns the events of this chunk.
    /// - Parameter chunk: The next bytes of the stream.
    /// - Returns: The events this chunk completes, in order.
    /// - Throws: As ``parse(_:into:)``; the events before the offending line are lost.
    public mutating func parse(_ chunk: some Collection<UInt8>) throws(EventStreamError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        let contiguous = chunk.withContiguousStorageIfAvailable { bytes in consume(bytes, into: &events) }
        let error: EventStreamError? =
            if let contiguous {
                contiguous
            } else {
                Array(chunk).withUnsafeBufferPointer { bytes in consume(bytes, into: &events) }
            }
        if let error { throw error }
        return events
    }

    /// The stream ended: an incomplete event (a block no empty line ended, or a line no terminator
    /// ended) is discarded and nothing is dispatched. ``lastEventID`` and ``reconnectionTime`` stay; the
    /// next bytes parsed are a new stream: a byte order mark at their start is stripped again, and the
    /// line, data and event type buffers start empty. Also makes a parser that threw usable again.
    public mutating func finish() {
        newEventID = nil
        eventTypeBuffer = ""
        releaseOrClear(&dataBuffer)
        blockRetry = nil
        releaseOrClear(&lineBuffer)
        skipsLineFeed = false
        checksByteOrderMark = true
        byteOrderMarkBytesSeen = 0
        failure = nil
    }

    // MARK: - Lines

    /// Parses `bytes`, returning the error to throw, if any (closures of the standard library's buffer
    /// accessors cannot throw a typed error).
    private mutating func consume(_ bytes: UnsafeBufferPointer<UInt8>, into events: inout [ServerSentEvent]) -> EventStreamError? {
        if let failure { return failure }
        let error = scan(bytes, into: &events)
        if let error { failure = error }
        return error
    }

    /// Splits `bytes` into lines: each line lying whole inside them is interpreted in place, the start of
    /// a line whose end is still to come is kept in ``lineBuffer``.
    private mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>, into events: inout [ServerSentEvent]) -> EventStreamError? {
        guard var position = bytes.baseAddress, !bytes.isEmpty else { return nil }
        let end = position + bytes.count
        if checksByteOrderMark {
            while byteOrderMarkBytesSeen < 3, position < end, position.pointee == Self.byteOrderMark(byteOrderMarkBytesSeen) {
                byteOrderMarkBytesSeen += 1
                position += 1
            }
            if byteOrderMarkBytesSeen == 3 {
                checksByteOrderMark = false
            } else if position == end {
                return nil  // every byte so far is the start of a byte order mark: wait for the rest
            } else {
                // Not a byte order mark: the bytes that looked like its start begin the first line.
                checksByteOrderMark = false
                for index in 0..<byteOrderMarkBytesSeen { lineBuffer.append(Self.byteOrderMark(index)) }
                if lineBuffer.count > maxLineLength { return .lineTooLong(limit: maxLineLength) }
            }
            if position == end { return nil }
        }
        if skipsLineFeed {
            skipsLineFeed = false
            if position.pointee == Self.lineFeed {
                position += 1
                if position == end { return nil }
            }
        }
        // The value of the block's only `data` line so far, left in `bytes` rather than copied into
        // `dataBuffer`: when the empty line follows within `bytes` (the usual event of one data line), the
        // event's data is decoded straight from the chunk. Copied into `dataBuffer` before `bytes` is gone.
        var pendingData: UnsafeBufferPointer<UInt8>?
        defer { if let pendingData { appendData(pendingData) } }
        // The next LF and CR at or after `position` (`end` when there is none): each is searched for
        // again only once `position` has passed it, so every byte is searched at most once for each.
        var nextLineFeed = Self.find(Self.lineFeed, from: position, to: end)
        var nextCarriageReturn = Self.find(Self.carriageReturn, from: position, to: end)
        while true {
            let terminator: UnsafePointer<UInt8>
            if position.pointee == Self.lineFeed || position.pointee == Self.carriageReturn {
                terminator = position  // an empty line
            } else {
                if nextLineFeed < position { nextLineFeed = Self.find(Self.lineFeed, from: position, to: end) }
                if nextCarriageReturn < position {
                    nextCarriageReturn = Self.find(Self.carriageReturn, from: position, to: end)
                }
                terminator = min(nextLineFeed, nextCarriageReturn)
            }
            let length = terminator - position
            if terminator == end {
                // The line goes on in the next chunk.
                if lineBuffer.count + length > maxLineLength, let error = overLimit(lineBuffer.count + length, position, length, held: pendingData.map { $0.count + 1 } ?? 0) {
                    return error
                }
                lineBuffer.append(contentsOf: UnsafeBufferPointer(start: position, count: length))
                return nil
            }
            if lineBuffer.isEmpty {
                if length > maxLineLength, let error = overLimit(length, position, length, held: pendingData.map { $0.count + 1 } ?? 0) { return error }
                let line = UnsafeBufferPointer(start: position, count: length)
                if let error = interpret(line, pendingData: &pendingData, into: &events) { return error }
            } else {
                if lineBuffer.count + length > maxLineLength, let error = overLimit(lineBuffer.count + length, position, length, held: pendingData.map { $0.count + 1 } ?? 0) {
                    return error
                }
                // Take the buffer out of `self` while its bytes are interpreted (which mutates `self`).
                var line: [UInt8] = []
                swap(&line, &lineBuffer)
                line.append(contentsOf: UnsafeBufferPointer(start: position, count: length))
                // The line's bytes do not outlive the closure: its data value is copied, never left pending.
                if let pending = pendingData {
                    appendData(pending)
                    pendingData = nil
                }
                let error = line.withUnsafeBufferPointer { line in
                    var linePendingData: UnsafeBufferPointer<UInt8>?
                    let error = interpret(line, pendingData: &linePendingData, into: &events)
                    if let linePendingData { appendData(linePendingData) }
                    return error
                }
                releaseOrClear(&line)
                swap(&line, &lineBuffer)
                if let error { return error }
            }
            position = terminator + 1
            if terminator.pointee == Self.carriageReturn {
                if position == end {
                    skipsLineFeed = true
                    return nil
                }
                if position.pointee == Self.lineFeed { position += 1 }
            }
            if position == end { return nil }
        }
    }

    /// The error for a line of `total` bytes so far, longer than ``maxLineLength``, whose bytes are
    /// ``lineBuffer`` then the `count` at `rest`: none for a `data` line, whose value goes to the event's
    /// data (`held` bytes of it not yet in ``dataBuffer``) and is bounded by ``maxEventSize`` instead (its 6-byte `data: ` prefix aside; the data
    /// buffer's exact bound is checked as the value is appended).
    private func overLimit(_ total: Int, _ rest: UnsafePointer<UInt8>, _ count: Int, held: Int) -> EventStreamError? {
        var isData = true
        for (index, expected) in Self.dataFieldPrefix.enumerated() {
            let byte: UInt8? =
                index < lineBuffer.count
                ? lineBuffer[index] : (index - lineBuffer.count < count ? rest[index - lineBuffer.count] : nil)
            if byte != expected {
                isData = false
                break
            }
        }
        guard isData else { return .lineTooLong(limit: maxLineLength) }
        let allowed = maxEventSize - dataBuffer.count - held + Self.dataPrefixLength
        return total > allowed ? .eventTooLarge(limit: maxEventSize) : nil
    }

    /// `data:`, how a `data` line starts.
    private static let dataFieldPrefix: [UInt8] = [0x64, 0x61, 0x74, 0x61, colon]
    /// `data: `: what a `data` line holds besides its value.
    private static let dataPrefixLength = 6

    /// Interprets one line (without its terminator). `pendingData` is the value of the block's only
    /// `data` line so far when it has not been copied into ``dataBuffer``; a first `data` value is left
    /// there (a later one copies both).
    private mutating func interpret(
        _ line: UnsafeBufferPointer<UInt8>, pendingData: inout UnsafeBufferPointer<UInt8>?, into events: inout [ServerSentEvent]
    ) -> EventStreamError? {
        guard let start = line.baseAddress, !line.isEmpty else {
            dispatch(pendingData: pendingData, into: &events)
            pendingData = nil
            return nil
        }
        if start.pointee == Self.colon {  // a comment
            if comments != nil {
                let text = String(decoding: UnsafeBufferPointer(start: start + 1, count: line.count - 1), as: UTF8.self)
                comments?.append((before: events.count, text: text))
            }
            return nil
        }
        let count = line.count
        let nameLength: Int
        var value: UnsafePointer<UInt8>
        var valueLength: Int
        if let colon = Self.findColon(start, count: count) {
            nameLength = colon - start
            value = colon + 1
            valueLength = count - nameLength - 1
            if valueLength > 0, value.pointee == Self.space {
                value += 1
                valueLength -= 1
            }
        } else {
            nameLength = count
            value = start + count
            valueLength = 0
        }
        switch nameLength {
        case 4 where start[0] == 0x64 && start[1] == 0x61 && start[2] == 0x74 && start[3] == 0x61:  // data
            // The event's data once this value is added, without the LF that follows it.
            let pendingCount = pendingData.map { $0.count + 1 } ?? 0
            if dataBuffer.count + pendingCount + valueLength > maxEventSize { return .eventTooLarge(limit: maxEventSize) }
            let data = UnsafeBufferPointer(start: value, count: valueLength)
            if dataBuffer.isEmpty, pendingData == nil {
                pendingData = data
            } else {
                if let pending = pendingData {
                    appendData(pending)
                    pendingData = nil
                }
                appendData(data)
            }
        case 5 where start[0] == 0x65 && start[1] == 0x76 && start[2] == 0x65 && start[3] == 0x6E && start[4] == 0x74:  // event
            eventTypeBuffer = String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
        case 2 where start[0] == 0x69 && start[1] == 0x64:  // id
            if Self.findOptional(0, from: value, to: value + valueLength) == nil {
                newEventID = String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
            }
        case 5 where start[0] == 0x72 && start[1] == 0x65 && start[2] == 0x74 && start[3] == 0x72 && start[4] == 0x79:  // retry
            if let milliseconds = Self.reconnectionMilliseconds(UnsafeBufferPointer(start: value, count: valueLength)) {
                let time = Duration.milliseconds(milliseconds)
                reconnectionTime = time
                blockRetry = time
            }
        default:
            break  // an unknown field
        }
        return nil
    }

    /// The specification's "dispatch the event", at an empty line; `pendingData` is the block's only
    /// `data` value when it was not copied into ``dataBuffer``.
    private mutating func dispatch(pendingData: UnsafeBufferPointer<UInt8>?, into events: inout [ServerSentEvent]) {
        if let newEventID {
            committedEventID = newEventID
            self.newEventID = nil
        }
        let retry = blockRetry
        blockRetry = nil
        // The bytes are copied, not decoded: `ServerSentEvent.data` decodes them when it is read, and typed
        // streams decode JSON from the bytes.
        let data: [UInt8]
        if let pendingData {
            data = Array(pendingData)
        } else if dataBuffer.isEmpty {
            if !eventTypeBuffer.isEmpty { eventTypeBuffer = "" }
            return
        } else {
            // The data buffer ends with the LF its last `data` line added: decode everything before it.
            data = dataBuffer.withUnsafeBufferPointer { bytes in Array(bytes.dropLast()) }
            releaseOrClear(&dataBuffer)
        }
        if eventTypeBuffer.isEmpty {
            events.append(ServerSentEvent(type: "message", dataBytes: data, id: committedEventID, retry: retry))
        } else {
            events.append(ServerSentEvent(type: eventTypeBuffer, dataBytes: data, id: committedEventID, retry: retry))
            eventTypeBuffer = ""
        }
    }

    /// Appends a `data` value and its LF to the data buffer.
    private mutating func appendData(_ value: UnsafeBufferPointer<UInt8>) {
        dataBuffer.append(contentsOf: value)
        dataBuffer.append(Self.lineFeed)
    }

    // MARK: - Helpers

    /// Empties `buffer`, keeping its capacity unless it grew large.
    private func releaseOrClear(_ buffer: inout [UInt8]) {
        if buffer.capacity > Self.retainedBufferCapacity {
            buffer = []
        } else {
            buffer.removeAll(keepingCapacity: true)
        }
    }
}
