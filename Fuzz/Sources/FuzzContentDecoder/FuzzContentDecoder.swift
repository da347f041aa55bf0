// Fuzz target: `ContentDecoder` (gzip and deflate response bodies), fed as the loop feeds it.
//
// The first three bytes choose: the coding and the mode (bits of byte 0), the chunk sizes (byte 1) and, in
// the round trip, how many copies of the payload to compress (byte 2) and how much of the end to cut off.
// Oracles:
// 1. Any bytes: no crash, no step that makes no progress (a hang), every step's output at most the
//    decoder's `outputLimit`, and the decoded total never past the body limit before the caller sees it
//    (the loop checks each step's output against the limit, so memory stays bounded).
// 2. Round trip: the payload compressed by Curlew's `Deflater`, copied up to 128 times (a small bomb), in
//    any chunking, decodes to exactly those bytes, or stops at the limit; cut short, it is never accepted
//    as complete (a decoding error, or `finish()` throws).

import FuzzSupport

@testable import CurlewEngine

/// The entry point SwiftPM links as `main` (see `runFuzzer`).
@_cdecl("FuzzContentDecoder_main")
public func fuzzContentDecoderMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzContentDecoder)
}

/// The body limit the loop would apply (a session's `maxResponseBodySize`, small here).
private let bodyLimit = 256 * 1024

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContentDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size >= 3 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let coding: ContentDecoder.Coding = input[0] & 1 == 0 ? .gzip : .deflate
    let roundTrip = input[0] & 2 != 0
    let payload = Array(input[3...])
    guard roundTrip else {
        _ = decode(payload, coding: coding, seed: input[1])
        return 0
    }
    let copies = Int(input[2] >> 1) + 1
    let original = Array([[UInt8]](repeating: payload, count: copies).joined())
    let compression: RequestCompression = coding == .gzip ? .gzip() : .deflate()
    let compressed: [UInt8]
    do {
        compressed = try original.withUnsafeBytes { try Deflater.compress($0, with: compression) }
    } catch {
        expectationFailed("Deflater failed: \(error)")
    }
    switch decode(compressed, coding: coding, seed: input[1]) {
    case .decoded(let bytes):
        expect(bytes == original, "round trip: \(bytes.count) bytes decoded, \(original.count) compressed")
    case .overLimit:
        expect(original.count > bodyLimit, "stopped at the limit with \(original.count) bytes")
    case .failed(let message):
        expectationFailed("a complete stream failed: \(message)")
    case .truncated:
        expectationFailed("a complete stream was called truncated")
    }
    // Cut short by 1 to 16 bytes, leaving at least one: never taken for a whole body. (Nothing left is an
    // empty body, which a coded response may have: a 204, a HEAD.)
    let cut = min(compressed.count - 1, Int(input[2] & 1) * 8 + Int(input[1] & 7) + 1)
    guard cut > 0 else { return 0 }
    switch decode(Array(compressed.dropLast(cut)), coding: coding, seed: input[1]) {
    case .decoded(let bytes):
        expectationFailed("a stream cut by \(cut) of \(compressed.count) bytes was accepted (\(bytes.count) bytes)")
    case .overLimit, .failed, .truncated:
        break
    }
    return 0
}

private enum Outcome {
    case decoded([UInt8])
    case overLimit
    case failed(String)
    case truncated
}

/// Feeds `body` in chunks of 1–64 bytes (chosen from `seed`) as the loop does: each chunk, then every
/// step until the decoder needs input; then the end.
private func decode(_ body: [UInt8], coding: ContentDecoder.Coding, seed: UInt8) -> Outcome {
    let decoder = ContentDecoder(coding, outputLimit: 4096)
    var decoded: [UInt8] = []
    var offset = 0
    var state = UInt32(seed) | 1
    while offset < body.count {
        state = state &* 1_103_515_245 &+ 12_345
        let length = min(body.count - offset, Int(state >> 16) % 64 + 1)
        decoder.feed(body[offset..<(offset + length)])
        offset += length
        var idleSteps = 0
        while !decoder.needsInput {
            let output: [UInt8]
            do {
                output = try decoder.decode()
            } catch {
                expect(error.code == .badContentEncoding || error.code == .curl, "untyped failure \(error.code)")
                return .failed(error.message)
            }
            expect(output.count <= decoder.outputLimit, "one step made \(output.count) bytes")
            idleSteps = output.isEmpty ? idleSteps + 1 : 0
            expect(idleSteps < 1_000, "no progress")
            decoded += output
            if decoded.count > bodyLimit { return .overLimit }
        }
    }
    do {
        try decoder.finish()
    } catch {
        return .truncated
    }
    return .decoded(decoded)
}
