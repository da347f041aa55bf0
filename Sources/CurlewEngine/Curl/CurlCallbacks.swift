// Curlew — the C callbacks libcurl calls on the loop thread.

import CCurl

/// libcurl's callbacks as `@convention(c)` functions without captures; their context arrives as an
/// unretained pointer (the loop, a multi shard, or a transfer context that the loop's active table keeps alive).
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

    static let closeSocket: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t) -> Int32 = { context, socket in
        guard let context else { return 0 }
        return Unmanaged<EventLoop>.fromOpaque(context).takeUnretainedValue().closeSocket(socket)
    }

    static let socket:
        @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?)
            -> Int32 = { _, socket, what, context, _ in
                guard let context else { return 0 }
                let shard = Unmanaged<MultiShard>.fromOpaque(context).takeUnretainedValue()
                shard.loop.watch(socket: socket, what: what, shard: shard.index)
                return 0
            }

    static let timer: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32 = {
        _, milliseconds, context in
        guard let context else { return 0 }
        let shard = Unmanaged<MultiShard>.fromOpaque(context).takeUnretainedValue()
        shard.deadline = milliseconds < 0 ? nil : EventLoop.now() &+ UInt64(milliseconds) &* 1_000_000
        return 0
    }
}
