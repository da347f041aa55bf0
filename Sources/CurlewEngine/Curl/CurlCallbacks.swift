// Curlew — the C callbacks libcurl calls on the loop thread.

import CCurl
import CCurlShims

/// libcurl's callbacks as `@convention(c)` functions without captures; their context arrives as an
/// unretained pointer (the loop thread, a multi shard, or a transfer context that the thread's table of
/// running transfers keeps alive). The hot ones borrow it (`_withUnsafeGuaranteedRef`): the owner keeps
/// it alive for the call, and a strong reference would cost a retain and a release per header line.
enum CurlCallbacks {
    static let write: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, context in
        guard let context else { return 0 }
        let bytes = size &* count
        return Unmanaged<TransferContext>.fromOpaque(context)._withUnsafeGuaranteedRef {
            $0.bodyBytes(UnsafeRawBufferPointer(start: data, count: bytes))
        }
    }

    /// Takes and drops body bytes: what libcurl still holds from a paused write of a transfer that is
    /// being removed (``CurlQuirks/pausedBytesOutliveTheTransfer``).
    static let discard: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        _, size, count, _ in size &* count
    }

    /// Fills curl's upload buffer from a body that is not a block of memory (a file, a stream, or bytes
    /// sent chunked with trailers).
    static let read: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        buffer, size, count, context in
        guard let context, let buffer else { return Int(curlew_read_abort) }
        let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
        return transfer.readBody(into: UnsafeMutableRawPointer(buffer), capacity: size &* count)
    }

    /// Rewinds such a body (libcurl's retry of a request on a fresh connection).
    static let seek: curlew_seek_callback = { context, offset, origin in
        guard let context else { return Int32(CURL_SEEKFUNC_FAIL) }
        let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
        return transfer.seekBody(to: Int(offset), origin: origin)
    }

    /// Hands libcurl the trailer fields after a chunked body's last byte.
    static let trailers: curlew_trailer_callback = { list, context in
        guard let context, let list else { return Int32(CURL_TRAILERFUNC_ABORT) }
        let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
        return transfer.trailerList(into: list)
    }

    /// Progress counts, for transfers of calls that report progress.
    static let progress: curlew_xferinfo_callback = { context, _, received, _, sent in
        guard let context else { return 0 }
        let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
        transfer.progressed(received: received, sent: sent)
        return 0
    }

    static let header: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, context in
        guard let context else { return 0 }
        let bytes = size &* count
        return Unmanaged<TransferContext>.fromOpaque(context)._withUnsafeGuaranteedRef {
            $0.headerLine(UnsafeRawBufferPointer(start: data, count: bytes))
        } ? bytes : 0
    }

    /// Opens a connection's socket for a transfer (the context is the transfer's, set per transfer).
    static let openSocket: curlew_opensocket_callback = { context, purpose, address in
        guard let context, let address else { return CURL_SOCKET_BAD }
        let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
        let thread = transfer.shard.thread
        let fd = thread.openSocket(
            for: transfer, family: address.pointee.family, type: address.pointee.socktype,
            protocol: address.pointee.protocol)
        if fd != CURL_SOCKET_BAD, let observer = thread.loop.socketObserver.withLock({ $0 }) { observer(fd) }
        return fd
    }

    /// curl put the transfer on a connection (new or reused) and is about to send its request; set only
    /// for keys that may multiplex (the context is the transfer's).
    static let prereq: curlew_prereq_callback = { context, _, _, _, _ in
        guard let context else { return CURL_PREREQFUNC_OK }
        let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
        transfer.shard.thread.noteAttached(transfer)
        return CURL_PREREQFUNC_OK
    }

    static let closeSocket: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t) -> Int32 = { context, socket in
        guard let context else { return 0 }
        return Unmanaged<LoopThread>.fromOpaque(context).takeUnretainedValue().closeSocket(socket)
    }

    static let socket:
        @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?)
            -> Int32 = { easy, socket, what, context, _ in
                guard let context else { return 0 }
                Unmanaged<MultiShard>.fromOpaque(context)._withUnsafeGuaranteedRef { shard in
                    shard.thread.watch(socket: socket, what: what, shard: shard.index)
                    if shard.thread.defaults.quirks.pausedTransferSocketStaysReadable, let easy, what != CURL_POLL_REMOVE {
                        shard.thread.noteSocket(socket, of: easy)
                    }
                }
                return 0
            }

    static let timer: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32 = {
        _, milliseconds, context in
        guard let context else { return 0 }
        let deadline = milliseconds < 0 ? nil : MonotonicClock.now() &+ UInt64(milliseconds) &* 1_000_000
        Unmanaged<MultiShard>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.deadline = deadline }
        return 0
    }
}
