// Curlew — an event stream's attempt read straight from the transfer by the task that reads the events:
// no task of its own, no hand-over per chunk.

import HTTPTypes

/// One connection attempt of an event stream whose transfer is read directly by the reading task. The
/// transfer runs until ``close()`` (or deinit). Not `Sendable`: the reading task alone uses it.
package final class EventStreamExchange {
    /// The response head.
    package let head: ResponseHead
    private let source: BodySource
    private let control: TransferControl
    private var iterator: ResponseBody.Iterator
    private var closed = false

    init(head: ResponseHead, source: BodySource, control: TransferControl) {
        self.head = head
        self.source = source
        self.control = control
        iterator = ResponseBody(source).makeAsyncIterator()
    }

    deinit { close() }

    /// The next chunk of the body; nil at its end.
    package nonisolated(nonsending) func next() async throws(TransportError) -> ArraySlice<UInt8>? {
        var iterator = self.iterator
        defer { self.iterator = iterator }
        return try await iterator.next(isolation: nil)
    }

    /// Ends the attempt: a transfer still running is aborted.
    package func close() {
        guard !closed else { return }
        closed = true
        source.endScope()
        control.abort()
    }
}

extension CurlSession {
    /// Starts `request` as an event stream's attempt read by the calling task, and waits for its head.
    /// Nil when the attempt needs the scoped exchange instead: a request with a streamed body (its
    /// producer runs in a task of its own), or a redirect (followed by the scoped exchange, which sends
    /// the request again).
    package func openEventStream(_ request: TransportRequest) async throws(TransportError) -> sending EventStreamExchange? {
        if request.body?.isStream == true { return nil }
        let started = MonotonicClock.now()
        let request = try request.applyingCompression()
        // Only the request's own total timeout, until the head: event streams have no session total.
        let deadline = request.timeout.map { started &+ UInt64(max(1, $0.nanoseconds)) }
        let prepared = try PreparedRequest(request, urls: urls)
        guard let streams = try await streams(for: prepared.request, streamedResponse: true), let response = streams.response
        else { return nil }
        let transfer = Transfer(
            request: prepared, deadline: deadline, isRedirectHop: false, submitted: started, streams: streams)
        let control = TransferControl(transfer: transfer, loop: loop)
        let head: ResponseHead
        do {
            head = try await Self.submitStreamed(transfer, control: control, response: response, loop: loop)
        } catch {
            control.abort()
            throw error
        }
        if (300..<400).contains(head.status.code), head.hasLocation {
            control.abort()
            return nil
        }
        let source = Self.liveBody(
            of: head, response: response, control: control, request: prepared.request,
            automaticDecompression: configuration.automaticDecompression,
            outputChunk: prepared.request.options.receiveBufferSize ?? configuration.receiveBufferSize)
        return EventStreamExchange(head: head, source: source, control: control)
    }
}
