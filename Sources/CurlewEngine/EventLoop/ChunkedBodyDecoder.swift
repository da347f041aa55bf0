// Curlew — HTTP/1.1 chunked framing of a streamed response, undone by the engine so it sees the end.

/// Takes a chunked body apart: the data of each chunk, the trailer lines, and the end.
///
/// libcurl decodes chunks itself, but tells no one when the last one arrived: the transfer only
/// completes once the request body has been sent as well. A streamed exchange whose producer waits for
/// the response's end before ending its own body (full duplex) would wait for ever. So for streamed
/// responses libcurl hands over the body as sent (`CURLOPT_HTTP_TRANSFER_DECODING` off; it still parses
/// the framing to know the end of the response) and this decoder finds the data, the trailers and the
/// end. Its grammar is libcurl's: hexadecimal size, anything up to the line feed (extensions), the
/// data, CR LF (a lone LF accepted), then trailer lines up to an empty line. Loop thread only.
struct ChunkedBodyDecoder {
    enum Event {
        /// Keep feeding.
        case more
        /// The body ended (the last chunk and the trailer section are complete).
        case end
        /// The framing is broken.
        case failure(String)
    }

    private enum State {
        case size
        case sizeLine
        case data
        case dataEnd
        case trailer
    }

    private var state = State.size
    private var size: UInt64 = 0
    private var digits = 0
    private var line: [UInt8] = []
    private(set) var isFinished = false

    /// Feeds body bytes as sent; `data` gets each piece of chunk data, `trailer` each trailer line
    /// (without its line end).
    mutating func decode(
        _ bytes: UnsafeRawBufferPointer, data: (UnsafeRawBufferPointer) -> Void, trailer: (UnsafeRawBufferPointer) -> Bool
    ) -> Event {
        var index = 0
        while index < bytes.count, !isFinished {
            switch state {
            case .size:
                let byte = bytes[index]
                if let value = Self.hexValue(byte) {
                    guard digits < 16 else { return .failure("a chunk size has more than 16 hexadecimal digits") }
                    size = size << 4 | UInt64(value)
                    digits += 1
                    index += 1
                } else {
                    guard digits > 0 else { return .failure("a chunk does not start with its size") }
                    state = .sizeLine
                }
            case .sizeLine:
                // Chunk extensions and the CR are skipped up to the line feed, as libcurl does.
                if bytes[index] == 0x0A { state = size == 0 ? .trailer : .data }
                index += 1
            case .data:
                let count = Int(min(UInt64(bytes.count - index), size))
                data(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]))
                index += count
                size -= UInt64(count)
                if size == 0 { state = .dataEnd }
            case .dataEnd:
                let byte = bytes[index]
                index += 1
                if byte == 0x0A {
                    state = .size
                    digits = 0
                } else if byte != 0x0D {
                    return .failure("a chunk's data is not followed by its line end")
                }
            case .trailer:
                let byte = bytes[index]
                index += 1
                if byte == 0x0A {
                    if line.last == 0x0D { line.removeLast() }
                    if line.isEmpty {
                        isFinished = true
                        return .end
                    }
                    let accepted = line.withUnsafeBytes { trailer($0) }
                    guard accepted else { return .failure("the trailer fields exceed the head limit") }
                    line.removeAll(keepingCapacity: true)
                } else {
                    line.append(byte)
                    guard line.count <= 100 * 1024 else { return .failure("a trailer line exceeds 100 KiB") }
                }
            }
        }
        return isFinished ? .end : .more
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
