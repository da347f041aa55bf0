// Curlew — a graceful shutdown on the loop thread: the machine decides, the thread acts and explains.

import Logging

extension LoopThread {
    /// A graceful shutdown was asked for: the machine refuses, fails and ends what it must now, and says
    /// ``LoopAction/drained`` (the loop then exits) once nothing is left or the deadline has passed.
    func drain(until deadline: UInt64, grace: Duration) {
        if deadline < drainGrace?.deadline ?? .max { drainGrace = (deadline, grace) }
        let queued = machine.queued
        machine.drain(until: deadline, now: now, into: &actions)
        performActions()
        logger.debug(
            "graceful shutdown",
            metadata: ["grace": "\(grace)", "failed-queued": "\(queued)", "running": "\(machine.running)"])
    }

    /// The error a transfer the machine ended for a graceful shutdown ends with.
    func drainError(for reason: EndReason, _ request: PreparedRequest) -> TransportError {
        switch reason {
        case .refused:
            return request.error(
                .sessionShutDown, "the session is shutting down gracefully and accepts no new requests; nothing was sent")
        case .queuedAtShutdown:
            return request.error(
                .sessionShutDown,
                "the request was queued for a connection when the session began shutting down gracefully and never started; nothing was sent"
            )
        case .eventStreamAtShutdown:
            return request.error(.sessionShutDown, "the session is shutting down gracefully: event streams end at once")
        case .shutdownDeadline:
            let grace = drainGrace.map { " (\($0.grace))" } ?? ""
            // Not `.cancelled`: the caller's task was not, and a cancellation is not retried or reported as
            // a shutdown.
            return request.error(
                .sessionShutDown, "the session's graceful shutdown deadline\(grace) passed before the transfer finished")
        case .cancelled, .totalTimeout, .idleTimeout, .shutdown:
            return request.error(.sessionShutDown, "the session was shut down")
        }
    }
}
