// Curlew — zlib's deflate, chunk by chunk, for request bodies.

import CZlib

/// Compresses a body piece by piece into `gzip` or zlib-format output.
///
/// Not `Sendable`: one is made per attempt of a body and used by the task producing it.
final class Deflater {
    /// zlib keeps a pointer back to its stream: the stream lives at a fixed address of its own.
    private let stream: UnsafeMutablePointer<z_stream>
    private var finished = false
    /// Compressed bytes gather here until a chunk is full.
    private let scratch: UnsafeMutableRawBufferPointer
    private var filled = 0

    /// - Throws: ``TransportError/Code/invalidBody`` when zlib cannot start (out of memory).
    init(_ compression: RequestCompression, chunkSize: Int = 256 * 1024) throws(TransportError) {
        scratch = .allocate(byteCount: max(chunkSize, 64), alignment: 16)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15: the largest window; +16 asks for a gzip header and trailer instead of the zlib ones.
        let windowBits: Int32 = compression.coding == .gzip ? 15 + 16 : 15
        let code = deflateInit2_(
            stream, Int32(compression.level), Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size))
        guard code == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            scratch.deallocate()
            throw TransportError(.invalidBody, message: "zlib could not start compressing (code \(code))")
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        scratch.deallocate()
    }

    /// How far `compress` pushes its output.
    enum Flush {
        /// Output gathers until a chunk is full (the best compression).
        case none
        /// Everything so far is handed out (zlib's sync flush), so the receiver can decode it now.
        case sync
        /// The stream ends.
        case finish
    }

    /// Compresses `input`. Output gathers in a buffer of `chunkSize` bytes, handed to `emit` each time it
    /// fills and, after a sync flush or at the end, with what is there.
    ///
    /// - Throws: ``TransportError/Code/invalidBody`` when zlib fails, or bytes come after the end.
    func compress(_ input: UnsafeRawBufferPointer, flush: Flush, emit: ([UInt8]) -> Void) throws(TransportError) {
        guard !finished else {
            throw TransportError(.invalidBody, message: "bytes were written after the compressed body ended")
        }
        // zlib counts input in 32 bits: larger bodies go in pieces.
        var offset = 0
        repeat {
            let count = min(input.count - offset, 1 << 30)
            let last = offset + count == input.count
            let piece = UnsafeRawBufferPointer(rebasing: input[offset..<(offset + count)])
            try deflatePiece(piece, flush: last ? flush : .none, emit: emit)
            offset += count
        } while offset < input.count
    }

    private func deflatePiece(_ input: UnsafeRawBufferPointer, flush: Flush, emit: ([UInt8]) -> Void) throws(TransportError) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        let mode =
            switch flush {
            case .none: Z_NO_FLUSH
            case .sync: Z_SYNC_FLUSH
            case .finish: Z_FINISH
            }
        while true {
            stream.pointee.next_out = scratch.baseAddress.map { $0.assumingMemoryBound(to: Bytef.self) + filled }
            stream.pointee.avail_out = uInt(scratch.count - filled)
            let code = deflate(stream, mode)
            guard code == Z_OK || code == Z_BUF_ERROR || code == Z_STREAM_END else {
                throw TransportError(.invalidBody, message: "zlib failed to compress the body (code \(code))")
            }
            filled = scratch.count - Int(stream.pointee.avail_out)
            // zlib returns with room left only once it has taken all the input and, for a flush, put out
            // everything pending.
            let drained = stream.pointee.avail_in == 0 && filled < scratch.count
            if filled == scratch.count || (filled > 0 && (code == Z_STREAM_END || (drained && flush == .sync))) {
                emit(Array(UnsafeRawBufferPointer(rebasing: scratch[0..<filled])))
                filled = 0
            }
            if code == Z_STREAM_END {
                finished = true
                return
            }
            if drained, flush != .finish { return }
        }
    }

    /// Compresses a whole body at once.
    static func compress(_ bytes: UnsafeRawBufferPointer, with compression: RequestCompression) throws(TransportError) -> [UInt8] {
        let deflater = try Deflater(compression)
        var result: [UInt8] = []
        try deflater.compress(bytes, flush: .finish) { chunk in
            if result.isEmpty { result = chunk } else { result.append(contentsOf: chunk) }
        }
        return result
    }
}
