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
///   dispatches nothing; otherwise it removes the data's last LF and creates a ``ServerSentEvents/Event`` whose
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
    static let retainedBufferCapacity = 4096

    static let lineFeed: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let colon: UInt8 = 0x3A
    static let space: UInt8 = 0x20

    /// The longest line other than a `data` line, in bytes without its terminator.
    let maxLineLength: Int
    /// The largest data of one event, in bytes.
    let maxEventSize: Int

    /// The stream's last event ID: what a reconnection sends as `Last-Event-ID` and what each
    /// dispatched event carries as its ``ServerSentEvents/Event/id``.
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
    public internal(set) var reconnectionTime: Duration?

    /// The event source's last event ID string.
    var committedEventID = ""
    /// The last event ID buffer when an `id` field set it since the last dispatch (`nil`: it equals
    /// ``committedEventID``).
    var newEventID: String?
    /// The event type buffer.
    var eventTypeBuffer = ""
    /// The data buffer as bytes (each `data` value followed by LF), decoded once at dispatch.
    var dataBuffer: [UInt8] = []
    /// A valid `retry` value seen in the current block.
    var blockRetry: Duration?
    /// The start of a line whose end has not arrived yet. Lines that lie whole inside a chunk are
    /// parsed from the chunk itself and never copied here.
    var lineBuffer: [UInt8] = []
    /// The last chunk ended with a CR: an LF at the start of the next one belongs to that line end.
    var skipsLineFeed = false
    /// Still at the start of the stream, where a byte order mark is stripped.
    var checksByteOrderMark = true
    /// How many bytes of the byte order mark have arrived at the start of the stream.
    var byteOrderMarkBytesSeen = 0
    /// The error thrown, until ``finish()``.
    var failure: EventStreamError?
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
    public mutating func parse(_ chunk: ArraySlice<UInt8>, into events: inout [ServerSentEvents.Event]) throws(EventStreamError) {
        let error = chunk.withUnsafeBufferPointer { bytes in consume(bytes, into: &events) }
        if let error { throw error }
    }

    /// Convenience: parses the next bytes and returns the events of this chunk.
    /// - Parameter chunk: The next bytes of the stream.
    /// - Returns: The events this chunk completes, in order.
    /// - Throws: As ``parse(_:into:)``; the events before the offending line are lost.
    public mutating func parse(_ chunk: some Collection<UInt8>) throws(EventStreamError) -> [ServerSentEvents.Event] {
        var events: [ServerSentEvents.Event] = []
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
}
