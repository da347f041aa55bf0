// Curlew — how a transfer ended, and the directions of a transfer that can be paused.

/// How a transfer ended. One reference wide (`indirect` failure; the response is itself one reference),
/// so handing it over moves a pointer: a `Result` carrying the error inline went
/// through generic value-witness copies on the loop thread (measured: about 1,000 instructions per
/// request).
package enum TransferOutcome: Sendable {
    case success(TransportResponse)
    indirect case failure(TransportError)
    /// A streamed response ended well; its bytes went to its reader as they arrived.
    case streamed

    /// The response, or the error thrown.
    package func get() throws(TransportError) -> TransportResponse {
        switch self {
        case .success(let response): return response
        case .failure(let error): throw error
        case .streamed: throw TransportError(.curl, message: "the transfer's response was streamed to its reader")
        }
    }
}

/// A direction of a transfer that can be paused.
enum PauseDirection: Sendable, Hashable {
    /// Receiving the response body.
    case receive
    /// Sending the request body.
    case send
}
