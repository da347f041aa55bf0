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

    /// Compresses `input` (and, when `finish`, ends the stream). Output gathers in a buffer of
    /// `chunkSize` bytes, handed to `emit` each time it fills and, at the end, with what is left: a
    /// small input does not make a small chunk.
    func compress(
        _ input: UnsafeRawBufferPointer, finish: Bool, emit: ([UInt8]) throws -> Void
    ) rethrows {
        guard !finished else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        let flush = finish ? Z_FINISH : Z_NO_FLUSH
        while true {
            stream.pointee.next_out = scratch.baseAddress.map { $0.assumingMemoryBound(to: Bytef.self) + filled }
            stream.pointee.avail_out = uInt(scratch.count - filled)
            let code = deflate(stream, flush)
            filled = scratch.count - Int(stream.pointee.avail_out)
            if filled == scratch.count || (code == Z_STREAM_END && filled > 0) {
                try emit(Array(UnsafeRawBufferPointer(rebasing: scratch[0..<filled])))
                filled = 0
            }
            if code == Z_STREAM_END {
                finished = true
                return
            }
            // zlib stops when it has used all the input or filled the buffer: only the latter leaves work.
            if stream.pointee.avail_in == 0, filled < scratch.count, !finish { return }
            if code != Z_OK, code != Z_BUF_ERROR { return }
        }
    }

    /// Compresses a whole body at once.
    static func compress(_ bytes: UnsafeRawBufferPointer, with compression: RequestCompression) throws(TransportError) -> [UInt8] {
        let deflater = try Deflater(compression)
        var result: [UInt8] = []
        deflater.compress(bytes, finish: true) { chunk in
            if result.isEmpty { result = chunk } else { result.append(contentsOf: chunk) }
        }
        return result
    }
}
