// Curlew — the one place an error from outside the provider layer becomes a CurlewError.

extension CurlewError {
    /// `error`, thrown by a stage the provider layer does not own (a request closure, a plugin, the
    /// transport, a stream body's producer, an event stream's reader), as the provider layer reports it.
    ///
    /// A `CurlewError` as it is; a transport failure as ``transport(_:)`` (a stream body's producer's own
    /// error, which the transport carries, as ``underlying(_:_:)``); an event stream's failure as
    /// ``eventStream(_:)``; a cancellation, or anything thrown by a task that was cancelled, as
    /// ``transport(_:)`` with ``/CurlewEngine/TransportError/Code/cancelled``; anything else as
    /// ``underlying(_:_:)``.
    package init(mapping error: any Error, url: String? = nil) {
        switch error {
        case let error as CurlewError:
            self = error
        case let error as TransportError:
            self.init(error)
        case let error as EventStreamError:
            self = .eventStream(error)
        default:
            if error is CancellationError || Task.isCancelled {
                self = .transport(TransportError(.cancelled, message: "the task was cancelled", url: url))
            } else {
                self = .underlying(error, nil)
            }
        }
    }

    /// A transport failure as the provider layer reports it: a stream body's producer that threw gives
    /// its own error, as a failure from elsewhere.
    package init(_ error: TransportError) {
        if error.code == .requestBodyFailed, let underlying = error.underlying {
            self = .underlying(underlying, nil)
        } else {
            self = .transport(error)
        }
    }
}
