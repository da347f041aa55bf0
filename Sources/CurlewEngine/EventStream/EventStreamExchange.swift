// Curlew — an event stream's attempt read straight from the transfer by the task that reads the events:
// no task of its own, no hand-over per chunk, and one small wait for the head and every chunk.

import HTTPTypes

/// One connection attempt of an event stream whose transfer is read directly by the reading task. The
/// transfer is submitted when the attempt is made and runs until ``close()`` (or deinit). Not
/// `Sendable`: the reading task alone uses it.
///
/// The head and the chunks are taken by synchronous looks (``pollHead()``, ``poll()``) between bare
/// waits (``wait()``). A stream spends its life suspended in that wait, and a task's allocator keeps
/// the deepest stack the task ever had until it ends: connecting through the same shallow wait keeps an
/// idle stream's task small.
package final class EventStreamExchange {
    private let transfer: Transfer
    private let control: TransferControl
    private let response: ResponseStream
    private let automaticDecompression: Bool
    private let outputChunk: Int
    /// The body, once the head has been taken.
    private var source: BodySource?
    private var iterator: ResponseBody.Iterator?
    private var closed = false

    fileprivate init(
        transfer: Transfer, control: TransferControl, response: ResponseStream, automaticDecompression: Bool,
        outputChunk: Int
    ) {
        self.transfer = transfer
        self.control = control
        self.response = response
        self.automaticDecompression = automaticDecompression
        self.outputChunk = outputChunk
    }

    deinit { close() }

    /// The response head once it has arrived (handed out once; nil before); throws what failed the
    /// attempt before it.
    @inline(never)
    package func pollHead() throws(TransportError) -> ResponseHead? {
        guard source == nil, let head = try response.pollHead(taking: true) else { return nil }
        let source = CurlSession.liveBody(
            of: head, response: response, control: control, request: transfer.request.request,
            automaticDecompression: automaticDecompression, outputChunk: outputChunk)
        self.source = source
        iterator = ResponseBody(source).makeAsyncIterator()
        return head
    }

    /// The next chunk of the body, its end, or `.pending` while nothing new has arrived (then
    /// ``wait()``). Only after the head was taken.
    @inline(never)
    func poll() throws(TransportError) -> BodySource.Poll {
        guard var iterator else { return .pending }
        defer { self.iterator = iterator }
        return try iterator.poll()
    }

    /// Returns once the head (before it was taken) or bytes (after) have arrived, or the attempt
    /// ended. Cancelling the waiting task aborts the transfer.
    @inline(never)
    nonisolated(nonsending) func wait() async {
        if let source {
            await source.waitForBytes()
            return
        }
        let control = control
        await withTaskCancellationHandler {
            await response.waitForHead()
        } onCancel: {
            control.abort()
        }
    }

    /// Ends the attempt: a transfer still running is aborted.
    package func close() {
        guard !closed else { return }
        closed = true
        source?.endScope()
        if source == nil { response.release() }
        control.abort()
    }
}

extension CurlSession {
    /// Submits `request` as an event stream's attempt, read by the calling task. Nil when the attempt
    /// needs the scoped exchange instead: a request with a streamed body (its producer runs in a task
    /// of its own) or with trailers computed when it is sent. A redirect shows in the head: the reader
    /// then closes the attempt and sends the request again through the scoped exchange, which follows it.
    package func startEventStream(_ request: TransportRequest) throws(TransportError) -> sending EventStreamExchange? {
        if request.body?.isStream == true || request.body?.trailerSource != nil { return nil }
        let started = MonotonicClock.now()
        let request = try request.applyingCompression()
        // Only the request's own total timeout, until the head: event streams have no session total.
        let deadline = request.timeout.map { started &+ UInt64(max(1, $0.nanoseconds)) }
        let prepared = carried(try PreparedRequest(request, urls: urls), streamedResponse: true)
        guard let streams = streams(for: prepared.request, streamedResponse: true, trailers: nil),
            let response = streams.response
        else { return nil }
        let transfer = Transfer(
            request: prepared, deadline: deadline, isRedirectHop: false, submitted: started, streams: streams)
        let control = TransferControl(transfer: transfer, loop: loop)
        Self.submit(transfer, loop: loop)
        return EventStreamExchange(
            transfer: transfer, control: control, response: response,
            automaticDecompression: configuration.automaticDecompression,
            outputChunk: prepared.request.options.receiveBufferSize ?? configuration.receiveBufferSize)
    }
}
