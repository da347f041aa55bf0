// Curlew — gzip and deflate bodies for the test server, through zlib.

import CZlib

/// Compresses bodies as servers do for `Content-Encoding: gzip` and `deflate`.
public enum Compression {
    /// The bytes in gzip format.
    public static func gzip(_ bytes: [UInt8]) -> [UInt8] {
        compress(bytes, windowBits: 15 + 16)
    }

    /// The bytes in zlib format, which is what `Content-Encoding: deflate` means in practice.
    public static func deflate(_ bytes: [UInt8]) -> [UInt8] {
        compress(bytes, windowBits: 15)
    }

    /// `count` zero bytes, gzip-compressed without ever holding them all: a decompression bomb.
    public static func gzipZeros(count: Int) -> [UInt8] {
        var stream = z_stream()
        guard deflateInit2_(
            &stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return [] }
        defer { deflateEnd(&stream) }
        let zeros = [UInt8](repeating: 0, count: 1 << 16)
        var output: [UInt8] = []
        var remaining = count
        var outputChunk = [UInt8](repeating: 0, count: 1 << 16)
        repeat {
            let take = min(remaining, zeros.count)
            remaining -= take
            let flush = remaining == 0 ? Z_FINISH : Z_NO_FLUSH
            zeros.withUnsafeBufferPointer { input in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = UInt32(take)
                repeat {
                    outputChunk.withUnsafeMutableBufferPointer { out in
                        stream.next_out = out.baseAddress
                        stream.avail_out = UInt32(out.count)
                        _ = CZlib.deflate(&stream, flush)
                        output += out[0..<(out.count - Int(stream.avail_out))]
                    }
                } while stream.avail_out == 0
            }
        } while remaining > 0
        return output
    }

    private static func compress(_ bytes: [UInt8], windowBits: Int32) -> [UInt8] {
        var stream = z_stream()
        guard deflateInit2_(
            &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return [] }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(bytes.count))) + 64)
        var input = bytes
        let produced = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = UInt32(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = UInt32(outputBuffer.count)
                _ = CZlib.deflate(&stream, Z_FINISH)
                return outputBuffer.count - Int(stream.avail_out)
            }
        }
        return Array(output[0..<produced])
    }
}
