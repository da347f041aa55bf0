// Curlew — decoding streamed gzip and deflate bodies on the reader's side, chunk by chunk, without sockets.

@testable import CurlewEngine
import CurlewTesting
import Testing

/// The text every case compresses: long enough for several output chunks.
private let original: [UInt8] = (0..<300_000).map { (index: Int) -> UInt8 in UInt8(truncatingIfNeeded: (index * 7 + index / 13) % 251) }
/// A shorter one for byte-by-byte feeding (each call is a full decode step).
private let short = Array(original.prefix(20_000))

/// Decodes `input` fed in pieces of `split` bytes, collecting every output chunk's size and bytes.
private func decode(_ coding: ContentDecoder.Coding, _ input: [UInt8], split: Int, limit: Int = 64 * 1024) throws(TransportError) -> (bytes: [UInt8], largestChunk: Int) {
    let decoder = ContentDecoder(coding, outputLimit: limit)
    var output: [UInt8] = []
    var largest = 0
    var offset = 0
    while offset < input.count {
        decoder.feed(input[offset..<min(input.count, offset + split)])
        offset += split
        while !decoder.needsInput {
            let chunk = try decoder.decode()
            largest = max(largest, chunk.count)
            output += chunk
        }
    }
    try decoder.finish()
    return (output, largest)
}

/// Raw deflate (no zlib header), as some servers send for `deflate`.
private func rawDeflate(_ bytes: [UInt8]) -> [UInt8] {
    // The zlib format is a 2-byte header, the raw stream and a 4-byte Adler-32 trailer.
    let zlib = Compression.deflate(bytes)
    return Array(zlib[2..<(zlib.count - 4)])
}

@Suite struct ContentDecoderTests {
    @Test(arguments: [7, 4096, 65536, 1 << 30])
    func gzipSplitAnywhereDecodesExactly(split: Int) throws {
        let result = try decode(.gzip, Compression.gzip(original), split: split)
        #expect(result.bytes == original)
        #expect(result.largestChunk <= 64 * 1024)
    }

    @Test(arguments: [ContentDecoder.Coding.gzip, .deflate])
    func aBodyFedOneByteAtATimeDecodesExactly(coding: ContentDecoder.Coding) throws {
        let compressed = coding == .gzip ? Compression.gzip(short) : Compression.deflate(short)
        #expect(try decode(coding, compressed, split: 1).bytes == short)
    }

    @Test(arguments: [13, 65536])
    func deflateInTheZlibFormatDecodesExactly(split: Int) throws {
        #expect(try decode(.deflate, Compression.deflate(original), split: split).bytes == original)
    }

    @Test(arguments: [1, 9, 65536])
    func rawDeflateIsAcceptedForDeflate(split: Int) throws {
        let input = split == 1 ? short : original
        #expect(try decode(.deflate, rawDeflate(input), split: split).bytes == input)
    }

    @Test func concatenatedGzipMembersDecodeLikeGunzip() throws {
        let first = Array(original[..<1000])
        let second = Array(original[1000..<5000])
        #expect(try decode(.gzip, Compression.gzip(first) + Compression.gzip(second), split: 333).bytes == first + second)
    }

    @Test func aBombComesOutOneBoundedChunkAtATime() throws {
        // 16 MiB of zeros compress to about 16 KiB: every decode call hands out at most the limit.
        let bomb = Compression.gzipZeros(count: 16 << 20)
        let decoder = ContentDecoder(.gzip, outputLimit: 65536)
        decoder.feed(bomb[...])
        var total = 0
        var calls = 0
        while !decoder.needsInput {
            let chunk = try decoder.decode()
            #expect(chunk.count <= 65536)
            total += chunk.count
            calls += 1
        }
        #expect(total == 16 << 20)
        #expect(calls >= 256)
    }

    @Test func corruptDataIsABadContentEncoding() {
        var corrupt = Compression.gzip(original)
        for index in 40..<60 { corrupt[index] ^= 0x5A }
        #expect(throws: TransportError.self) { _ = try decode(.gzip, corrupt, split: 4096) }
        do {
            _ = try decode(.gzip, corrupt, split: 4096)
        } catch {
            #expect(error.code == .badContentEncoding)
        }
    }

    @Test func aTruncatedStreamIsABadContentEncoding() {
        let truncated = Array(Compression.gzip(original).dropLast(100))
        do {
            _ = try decode(.gzip, truncated, split: 4096)
            Issue.record("a truncated gzip stream decoded")
        } catch {
            #expect(error.code == .badContentEncoding)
            #expect(error.message.contains("ends before"))
        }
    }

    @Test func bytesAfterTheEndAreIgnored() throws {
        #expect(try decode(.deflate, Compression.deflate(original) + [1, 2, 3], split: 1000).bytes == original)
    }

    @Test(arguments: [
        ("gzip", ContentDecoder.Coding.gzip), ("x-gzip", .gzip), ("GZIP", .gzip), ("deflate", .deflate),
        (" gzip , identity", .gzip), ("identity, deflate", .deflate),
    ])
    func codingsAreRecognized(header: String, coding: ContentDecoder.Coding) throws {
        #expect(try ContentDecoder.coding(for: header).get() == coding)
    }

    @Test func identityAndNoneMeanNoDecoding() throws {
        #expect(try ContentDecoder.coding(for: nil).get() == nil)
        #expect(try ContentDecoder.coding(for: "identity").get() == nil)
        #expect(try ContentDecoder.coding(for: "").get() == nil)
    }

    @Test(arguments: ["br", "zstd", "gzip, gzip", "compress", "gzip, br"])
    func otherCodingsAreNamed(header: String) {
        switch ContentDecoder.coding(for: header) {
        case .success(let coding): Issue.record("\(header) decoded as \(String(describing: coding))")
        case .failure(let unsupported): #expect(unsupported.name == header.lowercased().replacing(" ", with: "").replacing(",", with: ", "))
        }
    }
}
