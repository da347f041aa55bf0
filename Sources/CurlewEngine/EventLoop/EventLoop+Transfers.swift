// Curlew — starting, finishing and cancelling transfers on the loop thread.

import CCurl
import Synchronization
import CCurlShims

#if canImport(Glibc)
import Glibc
#endif

extension EventLoop {
    /// Hands a submitted transfer to curl (loop thread).
    func startTransfer(_ transfer: Transfer) {
        if transfer.isCancelled {
            counters.cancelledTransfers.add(1, ordering: .relaxed)
            transfer.finish(.failure(transfer.request.error(.cancelled, "the task was cancelled")))
            return
        }
        guard let shard = shardForNewTransfer(), let defaults = handleDefaults, let handle = takeHandle(defaults) else {
            transfer.finish(.failure(transfer.request.error(.curl, "libcurl could not create an easy handle")))
            return
        }
        let context = TransferContext(
            transfer: transfer, handle: handle, shard: shard, configuration: configuration, counters: counters)
        context.applyRequest(defaults: defaults)
        handle.errorBuffer.pointee = 0
        insertActive(context)
        let code = curl_multi_add_handle(shard.multi, handle.raw)
        if code == CURLM_OK {
            shard.active += 1
        } else {
            let message = String(cString: curl_multi_strerror(code))
            removeActive(context)
            recycle(context)
            transfer.finish(.failure(transfer.request.error(.curl, "curl_multi_add_handle failed: \(message)")))
        }
    }

    /// Aborts a transfer whose task was cancelled (loop thread). The connection it used is closed.
    func cancelTransfer(_ transfer: Transfer) {
        // Not active: either it already finished, or its submit command is still queued behind this one
        // and will see the cancelled flag when it runs.
        guard let context = activeContext(for: transfer) else { return }
        counters.cancelledTransfers.add(1, ordering: .relaxed)
        removeAndFinish(context, .failure(transfer.request.error(.cancelled, "the task was cancelled")))
    }

    /// Reads curl's completion messages and finishes those transfers (loop thread, outside callbacks).
    func collectFinished() {
        for shard in allShards { collectFinished(shard) }
    }

    private func collectFinished(_ shard: MultiShard) {
        var easy: UnsafeMutableRawPointer?
        var code = CURLE_OK
        while curlew_multi_info_read(shard.multi, &easy, &code) == 1 {
            guard let easy else { continue }
            var pointer: UnsafePointer<CChar>?
            guard curlew_easy_getinfo_string(easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else { continue }
            let context = Unmanaged<TransferContext>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
            let outcome: Transfer.Outcome
            let connects = context.handle.connectionsOpened
            if code == CURLE_OK, context.failure == nil {
                switch ResponseBuilder.response(for: context, connectionsOpened: connects) {
                case .success(let response):
                    counters.completedTransfers.add(1, ordering: .relaxed)
                    outcome = .success(response)
                case .failure(let error):
                    counters.failedTransfers.add(1, ordering: .relaxed)
                    outcome = .failure(error)
                }
            } else {
                counters.failedTransfers.add(1, ordering: .relaxed)
                outcome = .failure(ErrorMapping.error(for: code, context: context, configuration: configuration))
            }
            removeAndFinish(context, outcome, connectionsOpened: connects)
        }
    }

    /// Takes the handle out of the multi, returns it to the pool, then resumes the caller.
    /// `connectionsOpened` is passed when the caller has already read it from curl.
    func removeAndFinish(_ context: TransferContext, _ outcome: Transfer.Outcome, connectionsOpened: Int? = nil) {
        let connects = connectionsOpened ?? context.handle.connectionsOpened
        curl_multi_remove_handle(context.shard.multi, context.handle.raw)
        context.shard.active -= 1
        counters.connectionsOpened.add(connects, ordering: .relaxed)
        removeActive(context)
        recycle(context)
        context.transfer.finish(outcome)
    }

    /// Frees the transfer's request resources and puts its easy handle back in the pool.
    private func recycle(_ context: TransferContext) {
        counters.noteTransferBuffer(context.reportedBufferBytes)
        context.releaseBufferCounter()
        if let list = context.headerList { curl_slist_free_all(list) }
        context.headerList = nil
        if let owned = context.ownedBody { free(owned) }
        context.ownedBody = nil
        returnHandle(context.handle)
    }
}
