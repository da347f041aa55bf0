// Curlew — one server-sent event, as the WHATWG event-stream parser dispatches it.

extension ServerSentEvents {
    /// One event of a `text/event-stream` response: what the WHATWG HTML specification's "dispatch the
    /// event" step produces from a block of fields ended by an empty line.
    ///
    /// ``EventStreamParser`` creates events; a block whose `data` buffer stays empty (only `id`, `event`,
    /// `retry` or unknown fields, or comments) dispatches none.
    public struct Event: Sendable, Hashable {
        /// The event type: the block's last `event` field, or `"message"` when it had none or an empty one.
        public var type: String
        /// The values of the block's `data` fields joined with LF (U+000A), with no trailing LF. Bytes that
        /// are not valid UTF-8 appear as U+FFFD.
        ///
        /// Decoded from ``dataBytes`` each time it is read: read it once, or decode JSON from ``utf8Data``.
        public var data: String {
            get { String(decoding: dataBytes, as: UTF8.self) }
            set { dataBytes = Array(newValue.utf8) }
        }
        /// The bytes of ``data`` as they arrived (UTF-8 unless the server sent invalid bytes, which ``data``
        /// shows as U+FFFD). Events compare by these bytes.
        public var dataBytes: [UInt8]
        /// The stream's last event ID when the event was dispatched: the last `id` field seen in this or an
        /// earlier block (carried forward), `""` when none was seen or the last one was empty.
        public var id: String
        /// ``data`` as UTF-8 bytes: ``dataBytes`` themselves when they are valid UTF-8 (no copy), else with
        /// each invalid sequence replaced by U+FFFD, as the standard decodes the stream. What a typed event
        /// decodes.
        public var utf8Data: [UInt8] {
            if String(validating: dataBytes, as: UTF8.self) != nil { return dataBytes }
            return Array(data.utf8)
        }
        /// The reconnection time of a valid `retry` field in this event's block (the last one, clamped to
        /// ``EventStreamParser/maximumReconnectionTime``), or `nil` when the block had none.
        public var retry: Duration?

        /// Creates an event.
        /// - Parameters:
        ///   - type: The event type; `"message"` by default.
        ///   - data: The event's data.
        ///   - id: The last event ID at dispatch.
        ///   - retry: A valid `retry` value of the event's block.
        public init(type: String = "message", data: String = "", id: String = "", retry: Duration? = nil) {
            self.init(type: type, dataBytes: Array(data.utf8), id: id, retry: retry)
        }

        /// Creates an event whose data is `dataBytes` (see ``dataBytes``).
        public init(type: String = "message", dataBytes: [UInt8], id: String = "", retry: Duration? = nil) {
            self.type = type
            self.dataBytes = dataBytes
            self.id = id
            self.retry = retry
        }
    }
}
