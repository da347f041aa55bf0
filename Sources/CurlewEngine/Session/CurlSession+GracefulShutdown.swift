// Curlew — stopping a session gracefully: requests in flight finish, within a deadline.

extension CurlSession {
    /// Stops the session gracefully: requests already in flight may finish until `deadline` passes,
    /// then the rest are cancelled; returns once the event-loop thread has exited and every connection,
    /// socket and descriptor of the session is closed.
    ///
    /// From the moment it is called:
    /// - new requests fail at once with ``TransportError/Code/sessionShutDown``, and nothing is sent for
    ///   them (the next hop of a redirect already in flight still goes);
    /// - requests waiting for a connection (at ``SessionConfiguration/maxConnectionsPerHost`` or
    ///   ``SessionConfiguration/maxConnectionsTotal``) fail with ``TransportError/Code/sessionShutDown``:
    ///   they never started;
    /// - event streams (``events(for:lastEventID:policy:reconnectRequest:)``, a provider's) end at once
    ///   with ``EventStreamError/transport(_:)`` carrying ``TransportError/Code/sessionShutDown``, and do
    ///   not reconnect; so do streams waiting to reconnect.
    ///
    /// Requests still running when the deadline passes are stopped and fail with
    /// ``TransportError/Code/sessionShutDown``, whose message says the graceful shutdown's deadline passed
    /// (not ``TransportError/Code/cancelled``: the caller's task was not cancelled). Calling this again, or after ``shutdown()``,
    /// is safe: a sooner deadline then holds, and every call returns once the session has stopped.
    /// Cancelling the calling task stops the session at once, as ``shutdown()`` does.
    ///
    /// ```swift
    /// await session.shutdownGracefully(within: .seconds(5))
    /// ```
    ///
    /// - Parameter deadline: How long requests in flight may take to finish; nil uses
    ///   ``SessionConfiguration/gracefulShutdownTimeout``.
    public func shutdownGracefully(within deadline: Duration? = nil) async {
        let loop = loop
        await withTaskCancellationHandler {
            await loop.drain(within: deadline ?? configuration.gracefulShutdownTimeout)
        } onCancel: {
            loop.requestShutdown()
        }
        loop.join()
    }

    // MARK: For tests: the session's own resources

    /// The loop thread's kernel thread id (0 until it has started).
    package var loopThreadKernelID: Int32 { loopThreadID }

    /// The session's epoll and eventfd descriptors (closed once it has stopped).
    package var loopDescriptors: (epoll: Int32, wake: Int32) { (loop.epollFD, loop.wakeFD) }

    /// Calls `observer` on the loop thread with each socket curl's open-socket callback returns from now
    /// on: every connection the session opens.
    package func observeOpenedSockets(_ observer: @escaping @Sendable (Int32) -> Void) {
        loop.socketObserver.withLock { $0 = observer }
    }
}
