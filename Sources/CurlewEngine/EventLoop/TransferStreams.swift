// Curlew — the streamed parts of one transfer, and how the consuming side steers it.

import HTTPTypes

/// What of a transfer is streamed rather than held in memory: the response (read as it arrives), the
/// request body (produced while the request runs), and the request's trailer fields.
final class TransferStreams: Sendable {
    /// The streamed response; nil when the response is collected in memory.
    let response: ResponseStream?
    /// A stream body's hand-over; nil for bytes and files.
    let request: RequestStream?
    /// Whether a stream body can be produced again from its first byte.
    let requestReplayable: Bool
    /// Trailer fields known before sending (bodies in memory and files); a stream's come with its end.
    let trailers: HTTPFields?
    /// Whether the request sends trailers at all.
    let sendsTrailers: Bool

    init(
        response: ResponseStream?, request: RequestStream?, requestReplayable: Bool, trailers: HTTPFields?,
        sendsTrailers: Bool
    ) {
        self.response = response
        self.request = request
        self.requestReplayable = requestReplayable
        self.trailers = trailers
        self.sendsTrailers = sendsTrailers
    }

    /// The exchange failed: the response stream ends with `error` and the request stream closes.
    func end(with error: TransportError) {
        if let response, response.finish(.failed(error)) { response.wake() }
        request?.close()
    }

    /// The trailer fields to send after the last byte.
    var trailerFields: HTTPFields? { trailers ?? request?.trailers }
}

/// Steers a transfer from the consuming side: resumes a paused direction, aborts.
struct TransferControl: Sendable {
    let transfer: Transfer
    let loop: EventLoop

    /// Asks the loop to resume a direction the consumer (or producer) made room in.
    func resume(_ direction: PauseDirection) {
        loop.enqueue(.resume(transfer, direction))
    }

    /// Aborts the transfer (its connection is closed) unless it has ended.
    func abort() {
        if transfer.markCancelled() { loop.enqueue(.cancel(transfer)) }
    }

    /// The error a cancelled read throws.
    var cancellation: TransportError { transfer.request.error(.cancelled, "the task was cancelled") }
}

/// A direction of a transfer that can be paused.
enum PauseDirection: Sendable, Hashable {
    /// Receiving the response body.
    case receive
    /// Sending the request body.
    case send
}
