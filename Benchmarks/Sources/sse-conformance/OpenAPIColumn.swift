// apple/swift-openapi-runtime's decoder: `AsyncSequence<ArraySlice<UInt8>>.asDecodedServerSentEvents()`.
import OpenAPIRuntime

let openAPIColumn = Column(
    key: "openapi",
    title: "OpenAPI runtime 1.13.4",
    notes: [
        "Input: the chunks as `AsyncSequence<ArraySlice<UInt8>>`, decoded by `asDecodedServerSentEvents()`.",
        "Per event: `event` (nil counts as \"message\"), `data` (nil never matches: the table has no data-less event), "
            + "`id` (nil counts as \"\"). The API keeps no stream state, so the event's own `id` is compared with the "
            + "carried-forward last event ID the specification gives every event.",
        "Last event ID and reconnection time: not exposed by the API; derived as a consumer would, from the last "
            + "non-nil `id` and `retry` among the yielded events (so a `retry` in a block that is never dispatched "
            + "cannot be seen).",
    ],
    run: { chunks in
        var observed = Observed()
        var lastID: String?
        do {
            for try await event in ChunkSequence(chunks: chunks).asDecodedServerSentEvents() {
                observed.events.append(ObservedEvent(type: event.event, data: event.data, id: event.id))
                if let id = event.id { lastID = id }
                if let retry = event.retry { observed.retryMs = retry }
            }
        } catch {
            observed.error = String(describing: error)
        }
        observed.lastEventID = lastID ?? ""
        return observed
    }
)
