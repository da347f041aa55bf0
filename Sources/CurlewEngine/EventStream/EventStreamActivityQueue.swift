// Curlew — what an observed event stream has yet to hand out, in order.

/// The activities of an observed stream (``EventStreamActivity``) not yet handed out: the events the
/// parser dispatched with the comments in their places between them, and the reconnections. Owned by
/// the reader.
struct EventStreamActivityQueue {
    private var items: [EventStreamActivity] = []
    private var delivered = 0

    /// Adds parsed `events` with `comments`, each placed before the event whose index in `events` is its
    /// `before` (after them all when none is).
    mutating func append(events: ArraySlice<ServerSentEvents.Event>, comments: [(before: Int, text: String)]) {
        var comment = comments.startIndex
        for (index, event) in zip(events.indices, events) {
            while comment < comments.endIndex, comments[comment].before <= index {
                items.append(.comment(comments[comment].text))
                comment += 1
            }
            items.append(.event(event))
        }
        for rest in comments[comment...] { items.append(.comment(rest.text)) }
    }

    mutating func append(_ activity: EventStreamActivity) {
        items.append(activity)
    }

    /// The next activity not handed out, if any.
    mutating func next() -> EventStreamActivity? {
        guard delivered < items.count else { return nil }
        let item = items[delivered]
        delivered += 1
        if delivered == items.count { removeAll() }
        return item
    }

    mutating func removeAll() {
        items.removeAll(keepingCapacity: true)
        delivered = 0
    }
}
