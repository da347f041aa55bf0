// Curlew — gzip and deflate decoding of a streamed body, with zlib, on the consumer's side.

import CZlib

/// Inflates a `gzip` or `deflate` body chunk by chunk, producing at most ``outputLimit`` bytes per call.
///
/// Streamed responses are decoded here rather than by libcurl: libcurl (every version so far) inflates
/// a whole socket read before it can pause, so one read of a compression bomb (deflate reaches about 1032:1) turns
/// 64 KiB into 66 MiB at once. Decoding on the consumer's side, one bounded output at a time, keeps
/// the memory a stream holds independent of the compression ratio. Not `Sendable`: owned by one
/// body iterator.
final class ContentDecoder {
    enum Coding: Equatable {
        case gzip
        /// RFC 9110's `deflate`: the zlib format (servers that send raw deflate are accepted too).
        case deflate
    }

    /// The `Accept-Encoding` a streamed request offers: the codings decoded here.
    static let offered = "deflate, gzip"

    /// Most bytes one ``decode()`` call returns.
    let outputLimit: Int
    private let coding: Coding
    private var stream = z_stream()
    private var initialized = false
    /// `deflate` is raw deflate when its first two bytes are not a zlib header.
    private var triedRaw = false
    /// A lone first byte of a `deflate` body, until the second arrives.
    private var header: [UInt8] = []
    /// The input being decoded and how much of it zlib has consumed.
    private var input: ArraySlice<UInt8> = []
    private var consumed = 0
    private(set) var finished = false

    init(_ coding: Coding, outputLimit: Int) {
        self.coding = coding
        self.outputLimit = max(1024, outputLimit)
    }

    deinit {
        if initialized { inflateEnd(&stream) }
    }

    /// The coding for a `Content-Encoding` value, nil for `identity` (or none), or the name of a coding
    /// this decoder does not handle.
    static func coding(for contentEncoding: String?) -> Result<Coding?, UnsupportedCoding> {
        guard let contentEncoding else { return .success(nil) }
        let codings = contentEncoding.split(separator: ",").map {
            $0.trimmingCharacters(in: " \t").lowercased()
        }.filter { !$0.isEmpty && $0 != "identity" }
        switch codings {
        case []: return .success(nil)
        case ["gzip"], ["x-gzip"]: return .success(.gzip)
        case ["deflate"]: return .success(.deflate)
        default: return .failure(UnsupportedCoding(name: codings.joined(separator: ", ")))
        }
    }

    struct UnsupportedCoding: Error {
        let name: String
    }

    /// Sets the next compressed chunk; call ``decode()`` until ``needsInput``.
    func feed(_ chunk: ArraySlice<UInt8>) {
        if coding == .deflate, !initialized, !triedRaw, header.count + chunk.count < 2 {
            // `deflate` is told apart from raw deflate by its first two bytes: keep a lone first byte.
            header += chunk
            input = []
            consumed = 0
            return
        }
        input = header.isEmpty ? chunk : ArraySlice(header + chunk)
        header = []
        consumed = 0
    }

    /// Whether the current input is used up.
    var needsInput: Bool { consumed >= input.count }

    /// Decodes from the current input. Returns up to ``outputLimit`` bytes, an empty array when the input
    /// is used up without output, or throws for a corrupt stream.
    func decode() throws(TransportError) -> [UInt8] {
        guard !finished else {
            consumed = input.count  // bytes after the end of the stream are ignored, as libcurl does
            return []
        }
        try start()
        var produced = 0
        var result: Int32 = Z_OK
        // Room for what this input likely decodes to, up to the limit: a small input does not get 64 KiB.
        let room = min(outputLimit, max(16 * 1024, (input.count - consumed) * 8))
        let output = input.withUnsafeBytes { source in
            [UInt8](unsafeUninitializedCapacity: room) { buffer, count in
                let base = source.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self)) }
                stream.next_in = base.map { $0 + consumed }
                stream.avail_in = uInt(source.count - consumed)
                stream.next_out = buffer.baseAddress
                stream.avail_out = uInt(buffer.count)
                result = inflate(&stream, Z_NO_FLUSH)
                consumed = source.count - Int(stream.avail_in)
                produced = buffer.count - Int(stream.avail_out)
                count = produced
            }
        }
        switch result {
        case Z_OK, Z_BUF_ERROR:
            return output
        case Z_STREAM_END:
            if coding == .gzip, consumed < input.count {
                // Another gzip member follows (as `gunzip` decodes concatenated files).
                inflateReset(&stream)
            } else {
                finished = true
                consumed = input.count
            }
            return output
        default:
            let message = stream.msg.map { String(cString: $0) } ?? "zlib error \(result)"
            throw TransportError(.badContentEncoding, message: "the \(coding) response body cannot be decoded: \(message)")
        }
    }

    /// Called at the end of the body: a stream that stopped before its end is corrupt (truncated).
    func finish() throws(TransportError) {
        guard (initialized || !header.isEmpty), !finished else { return }
        throw TransportError(.badContentEncoding, message: "the \(coding) response body ends before its compressed stream does")
    }

    private func start() throws(TransportError) {
        guard !initialized else { return }
        if coding == .deflate, !triedRaw, input.count - consumed >= 2 {
            // A zlib stream opens with CMF (method 8) and FLG such that CMF * 256 + FLG is a multiple of 31.
            let cmf = Int(input[input.startIndex + consumed])
            let flg = Int(input[input.startIndex + consumed + 1])
            if cmf & 0x0F != 8 || (cmf * 256 + flg) % 31 != 0 { triedRaw = true }
        }
        // 15 + 16: a gzip header and trailer; 15: the zlib format; -15: raw deflate.
        let windowBits: Int32 = coding == .gzip ? 15 + 16 : (triedRaw ? -15 : 15)
        let code = inflateInit2_(&stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard code == Z_OK else {
            throw TransportError(.curl, message: "zlib could not start inflating (error \(code))")
        }
        initialized = true
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var start = startIndex
        var end = endIndex
        while start < end, set.contains(self[start]) { start = index(after: start) }
        while end > start, set.contains(self[index(before: end)]) { end = index(before: end) }
        return String(self[start..<end])
    }
}
