// Curlew — a request body compressed while it is produced.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes

#if canImport(Glibc)
import Glibc
#endif

/// Compresses the bytes written to it and writes the compressed bytes to the engine's writer.
///
/// A write of less than ``flushBelow`` bytes is flushed at once (zlib's sync flush), so a producer that
/// writes a little at a time (events, rows) is sent as it writes; bulk writes gather into full chunks.
/// A body of a declared length is checked against it, as the engine checks an uncompressed one.
///
/// `@unchecked Sendable`: the deflater is used by one write at a time. Writes to a body's writer are
/// awaited one after another by contract; overlapping ones are refused (the `busy` flag, under its
/// lock) rather than racing on zlib's state.
final class CompressingWriter: @unchecked Sendable {
    /// Writes smaller than this are flushed at once.
    static let flushBelow = 64 * 1024

    private let deflater: Deflater
    private let output: RequestBodyWriter
    private let declaredLength: Int?
    private let busy = Locked(false)
    private var written = 0

    init(_ compression: RequestCompression, into output: RequestBodyWriter, declaredLength: Int? = nil) throws(TransportError) {
        deflater = try Deflater(compression)
        self.output = output
        self.declaredLength = declaredLength
    }

    /// Compresses `chunk` and writes what is ready.
    func compress(_ chunk: ArraySlice<UInt8>) async throws(TransportError) {
        try enter()
        defer { leave() }
        written += chunk.count
        if let declaredLength, written > declaredLength {
            throw TransportError(
                .bodyLengthMismatch, message: "the request body's stream wrote more than the \(declaredLength) bytes it declared")
        }
        var ready: [[UInt8]] = []
        let flush: Deflater.Flush = chunk.count < Self.flushBelow ? .sync : .none
        let compressed = chunk.withUnsafeBytes { bytes in
            Result { () throws(TransportError) in try deflater.compress(bytes, flush: flush) { ready.append($0) } }
        }
        try compressed.get()
        for piece in ready { try await output.write(piece[...]) }
    }

    /// Ends the compressed stream and writes what is left.
    func finish() async throws(TransportError) {
        try enter()
        defer { leave() }
        if let declaredLength, written != declaredLength {
            throw TransportError(
                .bodyLengthMismatch,
                message: "the request body's stream wrote \(written) bytes; it declared \(declaredLength)")
        }
        var ready: [[UInt8]] = []
        try deflater.compress(UnsafeRawBufferPointer(start: nil, count: 0), flush: .finish) { ready.append($0) }
        for piece in ready { try await output.write(piece[...]) }
    }

    private func enter() throws(TransportError) {
        let overlapping = busy.withLock { busy in
            defer { busy = true }
            return busy
        }
        if overlapping {
            throw TransportError(.invalidBody, message: "writes to a request body's writer overlapped; await each write")
        }
    }

    private func leave() {
        busy.withLock { $0 = false }
    }
}

extension TransportRequest.Body {
    /// This body compressed with `compression`: bytes in memory at once (known length), files and streams
    /// while they are produced (unknown length; replayable when the source is). Trailers are kept.
    func compressed(with compression: RequestCompression) throws(TransportError) -> TransportRequest.Body {
        let trailers = trailerSource
        switch storage {
        case .bytes(let data):
            let compressed = data.withUnsafeBytes { bytes in
                Result { () throws(TransportError) in try Deflater.compress(bytes, with: compression) }
            }
            return TransportRequest.Body(storage: .bytes(Data(try compressed.get())), trailers: trailers)
        case .file(let region):
            let producer = BodyProducer(length: nil, replayable: true) { writer in
                let compressor = try CompressingWriter(compression, into: writer)
                try await Self.readFile(region) { chunk throws(TransportError) in try await compressor.compress(chunk) }
                try await compressor.finish()
            }
            return TransportRequest.Body(storage: .stream(producer), trailers: trailers)
        case .segments(let segments):
            let producer = BodyProducer(length: nil, replayable: true) { writer in
                let compressor = try CompressingWriter(compression, into: writer)
                for segment in segments {
                    switch segment {
                    case .bytes(let data): try await compressor.compress(ArraySlice(data))
                    case .file(let region):
                        try await Self.readFile(region) { chunk throws(TransportError) in try await compressor.compress(chunk) }
                    }
                }
                try await compressor.finish()
            }
            return TransportRequest.Body(storage: .stream(producer), trailers: trailers)
        case .stream(let source):
            let producer = BodyProducer(length: nil, replayable: source.replayable) { writer in
                let compressor = try CompressingWriter(compression, into: writer, declaredLength: source.length)
                try await source.produce(RequestBodyWriter(compressingInto: compressor))
                try await compressor.finish()
            }
            return TransportRequest.Body(storage: .stream(producer), trailers: trailers)
        }
    }
}

extension TransportRequest {
    /// The request as sent when it asks for request compression: its body compressed and
    /// `Content-Encoding` set (once: the result no longer asks for compression, so a redirect's replay
    /// compresses the source again rather than the compressed bytes). Unchanged without a body, for a
    /// HEAD, or when the request sets its own `Content-Encoding`.
    func applyingCompression() throws(TransportError) -> TransportRequest {
        guard let compression = options.requestCompression else { return self }
        var copy = self
        copy.options.requestCompression = nil
        guard let body, method != .head, headerFields[.contentEncoding] == nil else { return copy }
        do {
            copy.body = try body.compressed(with: compression)
        } catch {
            var failure = error
            failure.url = url
            failure.method = method.rawValue
            throw failure
        }
        copy.headerFields[.contentEncoding] = compression.coding.rawValue
        return copy
    }

    /// The `Content-Encoding` field request compression adds, for showing the request as sent.
    var compressionFieldShown: TransportRequest {
        guard let compression = options.requestCompression, body != nil, method != .head,
            headerFields[.contentEncoding] == nil
        else { return self }
        var copy = self
        copy.headerFields[.contentEncoding] = compression.coding.rawValue
        return copy
    }
}
