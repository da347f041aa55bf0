// Curlew — submitting, starting, completing and ending transfers: the machine decides, the thread acts.

import CCurl
import Synchronization
import CCurlShims

#if canImport(Glibc)
import Glibc
#endif

extension LoopThread {
    /// A submission from the inbox: the machine admits it, queues it or ends it at once.
    func submit(_ exchange: Exchange) {
        let key = exchange.request.poolKey
        // Spreading over shards only for an explicitly unlimited pool and a key that cannot multiplex.
        let mayMultiplex = defaults.mayMultiplex(key)
        let spreadable = poolIsUnlimited && !mayMultiplex
        let idle = exchange.request.request.options.idleTimeout.map { UInt64?.some(UInt64(max(1, $0.nanoseconds))) }
        let id = machine.submit(
            exchange, key: key, deadline: exchange.deadline, cancelled: exchange.isCancelled, spreadable: spreadable,
            mayMultiplex: mayMultiplex, isolated: defaults.isolates(key), priority: exchange.isRedirectHop ? .redirectHop : .normal,
            idleTimeout: idle, endsAtDrain: exchange.request.request.options.eventStream, now: now, into: &actions)
        if let id, exchange.register(id) {
            // Cancelled between the check above and the registration: nobody else will ask.
            machine.cancel(id, now: now, into: &actions)
        }
        performActions()
    }

    /// The calling task was cancelled: the machine ends the transfer wherever it is.
    func cancel(_ exchange: Exchange) {
        // Not yet registered: the submit command is still behind this one and sees the cancelled flag.
        guard let id = exchange.registeredID else { return }
        machine.cancel(id, now: now, into: &actions)
        performActions()
    }

    /// The reader or producer of a streamed transfer made room: the machine resumes that direction.
    func resume(_ exchange: Exchange, _ direction: PauseDirection) {
        guard let id = exchange.registeredID, context(id) != nil else { return }
        exchange.loopResumed(direction)
        machine.resume(id, direction, now: now, into: &actions)
        performActions()
    }

    /// The handler of a streamed transfer returned once the whole response had arrived: the transfer
    /// runs on for its request body, within its total deadline again.
    func awaitEnd(_ exchange: Exchange) {
        guard let id = exchange.registeredID, context(id) != nil, let deadline = exchange.deadline else { return }
        machine.rearmTotalDeadline(id, deadline)
    }

    /// Performs the machine's actions in order, until none are left (an action may produce more).
    func performActions(shutdownReason: String = "the session was shut down") {
        // The machine has already counted the outcome: publish before any caller is resumed, so a caller
        // never reads counts older than its own result.
        publishCounts()
        var index = 0
        while index < actions.count {
            let action = actions[index]
            index += 1
            switch action {
            case .start(let id, let exchange, let shard, let timeout, let connection):
                start(id, exchange, shard: shard, timeout: timeout, connection: connection)
            case .fail(let exchange, let reason):
                count(reason)
                exchange.finish(.failure(error(for: reason, exchange.request, shutdownReason: shutdownReason)))
            case .abort(let id, let exchange, let reason):
                count(reason)
                guard let context = takeContext(id) else { continue }
                if context.connection.attached, defaults.quirks.abortedStreamResetIsDelayed {
                    // The RST_STREAM of an HTTP/2 stream ended early would wait for the connection's next
                    // frames: on a connection this stream was the last to use, the server would keep the
                    // stream open. Closing that connection ends it at once (libcurl keeps a connection
                    // other streams still use).
                    context.handle.set(CURLOPT_FORBID_REUSE, 1)
                }
                remove(context)
                // A failure a callback recorded (a body that could not be rewound, a pause curl refused)
                // explains the end better than the reason.
                let failure = context.failure ?? error(for: reason, exchange.request, shutdownReason: shutdownReason)
                exchange.finish(.failure(failure))
            case .setPause(let id, let receive, let send):
                guard let context = context(id) else { continue }
                if !receive { releaseReads(of: context) }
                // Unpausing delivers what curl kept from a paused write, through the callbacks, which may
                // pause again: the machine hears of that at once.
                let code = curl_easy_pause(context.handle.raw, Self.pauseBits(receive: receive, send: send))
                if !pass.transferEvents.isEmpty { tellMachineAboutTransfers() }
                // BAD_FUNCTION_ARGUMENT: no connection (between libcurl's retry on a dead connection and the
                // new one), where nothing is paused either. Another error came from a callback.
                if code != CURLE_OK, code != CURLE_BAD_FUNCTION_ARGUMENT {
                    context.failure = context.exchange.request.error(
                        .curl, "libcurl could not resume the exchange: \(String(cString: curl_easy_strerror(code)))")
                    machine.cancel(id, now: now, into: &actions)
                }
            case .checkIdle(let id):
                guard let context = context(id) else { continue }
                let lastActivity = context.lastActivity(now: now)
                // Stalled by libcurl, not waiting for a producer that has nothing to send yet (a full-duplex
                // exchange whose response ended first waits for its body as before).
                if context.earlyAnswer == .answered, lastActivity &+ CurlQuirks.earlyAnswerGrace <= now,
                    machine.pauseState(of: id)?.send == false
                {
                    settleEarlyAnswer(context)
                    continue
                }
                machine.idleCheck(id, lastActivity: lastActivity, now: now, into: &actions)
                publishCounts()
            case .drained:
                exiting = true
            }
        }
        // Element by element from the end: `removeAll(keepingCapacity:)` goes through a generic
        // replaceSubrange that cost more than the loop above for one or two actions.
        while !actions.isEmpty { actions.removeLast() }
    }

    private func publishCounts() {
        gauges?.queued(machine.queued)
        counters.queuedTransfers.store(machine.queued, ordering: .relaxed)
        counters.activeTransfers.store(machine.running, ordering: .relaxed)
    }

    /// Counts a transfer the machine ended: a cancellation, or a failure (shutdown is neither).
    private func count(_ reason: EndReason) {
        switch reason {
        case .cancelled: counters.cancelledTransfers.add(1, ordering: .relaxed)
        case .totalTimeout, .idleTimeout: counters.failedTransfers.add(1, ordering: .relaxed)
        case .shutdownDeadline: counters.cancelledTransfers.add(1, ordering: .relaxed)
        case .shutdown, .refused, .queuedAtShutdown, .eventStreamAtShutdown: break
        }
    }

    /// Hands a transfer the machine admitted to curl, on the shard it chose.
    private func start(_ id: TransferID, _ exchange: Exchange, shard index: Int, timeout: UInt64?, connection: ConnectionRole) {
        while index >= shards.count {
            guard openShard() != nil else { break }
        }
        guard index < shards.count, let (handle, residue) = pool.take(defaults) else {
            _ = machine.startFailed(id, now: now, into: &actions)
            exchange.finish(.failure(exchange.request.error(.curl, "libcurl could not create an easy handle")))
            return
        }
        let shard = shards[index]
        let context = TransferContext(
            id: id, exchange: exchange, handle: handle, residue: residue, shard: shard, role: connection,
            configuration: configuration, counters: counters)
        if let error = context.applyRequest(defaults: defaults, timeout: timeout) {
            recycle(context, residue: context.residueAfter)
            _ = machine.startFailed(id, now: now, into: &actions)
            counters.failedTransfers.add(1, ordering: .relaxed)
            exchange.finish(.failure(error))
            return
        }
        handle.errorBuffer.pointee = 0
        exchange.started()
        store(context)
        gauges?.transferStarted(exchange.request.poolKey)
        let code = curl_multi_add_handle(shard.multi, handle.raw)
        guard code == CURLM_OK else {
            let message = String(cString: curl_multi_strerror(code))
            _ = takeContext(id)
            gauges?.transferEnded(exchange.request.poolKey)
            recycle(context, residue: context.residueAfter)
            _ = machine.startFailed(id, now: now, into: &actions)
            counters.failedTransfers.add(1, ordering: .relaxed)
            exchange.finish(.failure(exchange.request.error(.curl, "curl_multi_add_handle failed: \(message)")))
            return
        }
    }

    /// Reads curl's completion messages and finishes those transfers (outside curl's callbacks).
    func collectFinished() {
        for shard in shards { collectFinished(shard) }
        handOverCompleted()
    }

    /// Hands the completed buffered transfers' outcomes to their callers.
    func handOverCompleted() {
        guard !completed.isEmpty else { return }
        // Moved out in order (reversed, then popped), not copied: a copy retains each part of a response.
        completed.reverse()
        while let (exchange, outcome) = completed.popLast() { exchange.finish(outcome) }
    }

    private func collectFinished(_ shard: MultiShard) {
        var easy: UnsafeMutableRawPointer?
        var code = CURLE_OK
        while curlew_multi_info_read(shard.multi, &easy, &code) == 1 {
            guard let easy else { continue }
            var pointer: UnsafePointer<CChar>?
            guard curlew_easy_getinfo_string(easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else { continue }
            let context = Unmanaged<TransferContext>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
            finish(context, code: context.settledCode(code))
        }
    }

    /// Ends a transfer curl finished with `code` (or one the loop ends as curl should have: see
    /// `settleEarlyAnswer(_:)`). A buffered outcome waits in `completed` for `handOverCompleted()`.
    func finish(_ context: TransferContext, code: CURLcode) {
        if context.exchange.streamsResponse {
            finishStreamed(context, code: code)
            return
        }
        let id = context.id
        let outcome = ResponseBuilder.outcome(for: context, code: code, configuration: configuration)
        switch outcome {
        case .success, .streamed: counters.completedTransfers.add(1, ordering: .relaxed)
        case .failure: counters.failedTransfers.add(1, ordering: .relaxed)
        }
        _ = takeContext(id)
        remove(context)
        // The machine frees the place (and may start the next waiting transfer) before the caller hears.
        _ = machine.complete(id, now: now, into: &actions)
        publishCounts()
        completed.append((context.exchange, outcome))
        performActions()
    }

    /// A streamed response curl finished: its reader gets the end (the trailers, or the error) after the
    /// bytes it has not read yet.
    private func finishStreamed(_ context: TransferContext, code: CURLcode) {
        let outcome: TransferOutcome
        if code == CURLE_OK, context.failure == nil {
            if context.exchange.endBody(.complete, trailers: context.head.makeTrailers()) { pass.responseWakes.append(context.exchange) }
            outcome = .streamed
            counters.completedTransfers.add(1, ordering: .relaxed)
        } else {
            let error = ErrorMapping.error(for: code, context: context, configuration: configuration)
            if context.exchange.endBody(.failed(error)) { pass.responseWakes.append(context.exchange) }
            outcome = .failure(error)
            counters.failedTransfers.add(1, ordering: .relaxed)
        }
        _ = takeContext(context.id)
        remove(context)
        _ = machine.complete(context.id, now: now, into: &actions)
        publishCounts()
        context.exchange.finish(outcome, streamed: context.exchange.record == nil ? nil : ResponseBuilder.hopEnd(of: context))
        performActions()
    }

    /// Takes the handle out of its multi handle and gives it back to the pool.
    private func remove(_ context: TransferContext) {
        context.recordFinalProgress()
        releaseReads(of: context)
        // An opener or probe that ended unsettled lets the next one try; an attached transfer stops counting.
        ledger.transferEnded(context.exchange.request.poolKey, &context.connection, into: &pass.connectionFindings)
        gauges?.transferEnded(context.exchange.request.poolKey)
        var residue = context.residueAfter
        if defaults.quirks.pausedBytesOutliveTheTransfer, context.receivePauses > 0 {
            // What libcurl kept from a paused write would reach the handle's next transfer: resumed now,
            // while the handle still has its connection, into a callback that drops it. The handle's
            // callbacks changed, so it is reset before its next use.
            _ = curlew_easy_setopt_data_callback(context.handle.raw, CURLOPT_WRITEFUNCTION, CurlCallbacks.discard)
            _ = curl_easy_pause(context.handle.raw, Self.pauseBits(receive: false, send: false))
            residue = nil
        }
        curl_multi_remove_handle(context.shard.multi, context.handle.raw)
        counters.connectionsOpened.add(context.connectionsOpened, ordering: .relaxed)
        recycle(context, residue: residue)
    }

    /// Frees the transfer's request resources and puts its easy handle back in the pool, reset unless it
    /// keeps `residue`.
    private func recycle(_ context: TransferContext, residue: HandleResidue?) {
        counters.noteTransferBuffer(context.reportedBufferBytes)
        context.releaseBufferCounter()
        context.releaseRequestResources()
        // A handle that sent trailers may corrupt memory on its next upload (CurlQuirks.trailersSpoilTheHandle).
        pool.give(
            context.handle, defaults, residue: residue,
            reusable: !(defaults.quirks.trailersSpoilTheHandle && context.exchange.sendsTrailers))
    }

    // MARK: The table of running contexts

    private func store(_ context: TransferContext) {
        let slot = Int(context.id.slot)
        if slot >= contexts.count { contexts.append(contentsOf: repeatElement(nil, count: slot + 1 - contexts.count)) }
        contexts[slot] = context
    }

    /// `curl_easy_pause`'s argument: both directions, always (it sets both at once).
    static func pauseBits(receive: Bool, send: Bool) -> Int32 {
        Int32((receive ? curlew_pause_receive : 0) | (send ? curlew_pause_send : 0))
    }

    func context(_ id: TransferID) -> TransferContext? {
        let slot = Int(id.slot)
        guard slot < contexts.count, let context = contexts[slot], context.id == id else { return nil }
        return context
    }

    private func takeContext(_ id: TransferID) -> TransferContext? {
        guard let context = context(id) else { return nil }
        contexts[Int(id.slot)] = nil
        return context
    }

    /// The error a transfer ends with when the machine ends it.
    private func error(for reason: EndReason, _ request: PreparedRequest, shutdownReason: String) -> TransportError {
        switch reason {
        case .cancelled:
            return request.error(.cancelled, "the task was cancelled")
        case .shutdown:
            return request.error(.sessionShutDown, shutdownReason)
        case .refused, .queuedAtShutdown, .eventStreamAtShutdown, .shutdownDeadline:
            return drainError(for: reason, request)
        case .totalTimeout:
            let total = request.request.timeout ?? configuration.totalTimeout
            var error = request.error(.timedOut, "the total timeout\(total.map { " of \($0)" } ?? "") expired")
            error.timeout = .total
            return error
        case .idleTimeout:
            let limit = request.request.options.idleTimeout ?? configuration.idleTimeout
            let idle = limit.map { "\($0)" } ?? "the idle timeout"
            var error = request.error(.timedOut, "no byte was sent or received for \(idle)")
            error.timeout = .idle
            return error
        }
    }
}
