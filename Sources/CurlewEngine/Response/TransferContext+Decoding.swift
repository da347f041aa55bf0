// Curlew — a buffered body's Content-Encoding undone on the loop thread, its end checked.

import HTTPTypes

extension TransferContext {
    /// Chooses how the final head's `Content-Encoding` is undone: gzip and deflate here; a coding the
    /// request asked for itself (its own `Accept-Encoding`) is kept as sent; any other fails the transfer.
    /// Returns false to abort it.
    func setUpDecoding() -> Bool {
        let request = exchange.request.request
        guard shard.thread.defaults.automaticDecompression, request.method != .head, head.statusCode != 204,
            head.statusCode != 304
        else { return true }
        // Every Content-Encoding field counts: a stack split over several lines is still a stack.
        let fields = head.fields[values: .contentEncoding]
        switch ContentDecoder.coding(for: fields.isEmpty ? nil : fields.joined(separator: ", ")) {
        case .success(let coding?):
            decoder = ContentDecoder(coding, outputLimit: Self.decodedChunk)
        case .success(nil):
            break
        case .failure(let unsupported):
            let asked = request.headerFields[values: .acceptEncoding].joined(separator: ",").lowercased()
            guard asked.contains(unsupported.name) else {
                failure = exchange.request.error(
                    .badContentEncoding, "the response is encoded with \(unsupported.name), which is not decoded")
                return false
            }
        }
        return true
    }

    /// Decodes body bytes as they came and keeps what they decode to. Returns the count taken, or 0 to
    /// abort the transfer (a corrupt coding, or the body limit).
    func decode(_ bytes: UnsafeRawBufferPointer, with decoder: ContentDecoder) -> Int {
        decoder.feed([UInt8](bytes)[...])
        while !decoder.needsInput {
            let output: [UInt8]
            do {
                output = try decoder.decode()
            } catch {
                failure = exchange.request.error(error.code, error.message)
                return 0
            }
            if !output.isEmpty {
                let stored = output.withUnsafeBytes { store($0) }
                guard stored == output.count else { return 0 }
            }
        }
        return bytes.count
    }

    /// Checks, when curl completed the transfer, that the body's coding ended: a gzip member without its
    /// trailer or a deflate stream without its last block is a truncated body, whatever the framing said.
    func finishDecoding() {
        guard let decoder, failure == nil else { return }
        do {
            try decoder.finish()
        } catch {
            failure = exchange.request.error(error.code, error.message)
        }
    }

    /// Most bytes one decoding step produces.
    private static let decodedChunk = 64 * 1024
}
