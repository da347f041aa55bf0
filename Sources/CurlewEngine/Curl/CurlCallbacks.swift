// Curlew — the C callbacks libcurl calls on the loop thread.

import CCurl
import CCurlShims

/// libcurl's callbacks as `@convention(c)` functions without captures; their context arrives as an
/// unretained pointer (the loop thread, a multi shard, or a transfer context that the thread's table of
/// running transfers keeps alive).
enum CurlCallbacks {
    static let write: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, context in
        guard let context else { return 0 }
        let bytes = size &* count
        let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
        return transfer.bodyBytes(UnsafeRawBufferPointer(start: data, count: bytes)) ? bytes : 0
    }

    static let header: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, context in
        guard let context else { return 0 }
        let bytes = size &* count
        let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
        return transfer.headerLine(UnsafeRawBufferPointer(start: data, count: bytes)) ? bytes : 0
    }

    /// Opens a connection's socket for a transfer (the context is the transfer's, set per transfer).
    static let openSocket: curlew_opensocket_callback = { context, purpose, address in
        guard let context, let address else { return CURL_SOCKET_BAD }
        let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
        return transfer.shard.thread.openSocket(
            for: transfer, family: address.pointee.family, type: address.pointee.socktype,
            protocol: address.pointee.protocol)
    }

    static let closeSocket: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t) -> Int32 = { context, socket in
        guard let context else { return 0 }
        return Unmanaged<LoopThread>.fromOpaque(context).takeUnretainedValue().closeSocket(socket)
    }

    static let socket:
        @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?)
            -> Int32 = { _, socket, what, context, _ in
                guard let context else { return 0 }
                let shard = Unmanaged<MultiShard>.fromOpaque(context).takeUnretainedValue()
                shard.thread.watch(socket: socket, what: what, shard: shard.index)
                return 0
            }

    static let timer: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32 = {
        _, milliseconds, context in
        guard let context else { return 0 }
        let shard = Unmanaged<MultiShard>.fromOpaque(context).takeUnretainedValue()
        shard.deadline = milliseconds < 0 ? nil : MonotonicClock.now() &+ UInt64(milliseconds) &* 1_000_000
        return 0
    }
}
