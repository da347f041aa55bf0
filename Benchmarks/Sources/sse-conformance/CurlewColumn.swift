// Curlew's own parser: CurlewEngine's EventStreamParser, fed chunk by chunk, then finish().
import CurlewEngine

let curlewColumn = Column(
    key: "curlew",
    title: "Curlew EventStreamParser",
    notes: [
        "Each chunk through `parse(_:into:)`, then `finish()`; events as dispatched (type, data, id).",
        "Last event ID: `lastEventID`; reconnection time: `reconnectionTime` (nil before any valid `retry`).",
    ],
    run: { chunks in
        var parser = EventStreamParser()
        var events: [ServerSentEvents.Event] = []
        var observed = Observed()
        do {
            for chunk in chunks { try parser.parse(chunk, into: &events) }
        } catch {
            observed.error = String(describing: error)
        }
        parser.finish()
        observed.events = events.map { ObservedEvent(type: $0.type, data: $0.data, id: $0.id) }
        observed.lastEventID = parser.lastEventID
        observed.retryMs = parser.reconnectionTime.map { duration in
            let (seconds, attoseconds) = duration.components
            return seconds * 1000 + attoseconds / 1_000_000_000_000_000
        }
        return observed
    }
)
