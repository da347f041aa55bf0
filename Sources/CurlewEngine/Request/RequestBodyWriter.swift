// Curlew — what a stream body's producer writes its bytes to.

/// Takes the bytes of a request body produced while the request runs (see
/// ``TransportRequest/Body/stream(length:replayable:_:)``).
///
/// Each write hands its bytes to the engine, which sends them as the connection allows; a write waits
/// while the engine holds as much as ``SessionConfiguration/requestBodyBufferSize`` of unsent bytes. Arrays
/// and array slices are kept without copying until libcurl takes them.
///
/// Await each write before starting the next: writes to one writer must not overlap.
public struct RequestBodyWriter: Sendable {
    /// Where the bytes go: the engine's hand-over, or a compressor in front of another writer.
    private enum Destination: Sendable {
        case engine(Exchange, generation: Int)
        case compressing(CompressingWriter)
        case forwarding(@Sendable (ArraySlice<UInt8>) async throws(TransportError) -> Void)
    }

    private let destination: Destination

    /// A writer into the exchange's request side for one run of the producer.
    init(exchange: Exchange, generation: Int) {
        destination = .engine(exchange, generation: generation)
    }

    /// A writer that compresses what it is given into `compressor`'s writer.
    init(compressingInto compressor: CompressingWriter) {
        destination = .compressing(compressor)
    }

    /// A writer that hands each write to `write`: for encoders that frame or count what another
    /// producer writes (a multipart body's stream part).
    package init(forwardingTo write: @escaping @Sendable (ArraySlice<UInt8>) async throws(TransportError) -> Void) {
        destination = .forwarding(write)
    }

    /// Writes `bytes`.
    ///
    /// - Throws: ``TransportError/Code/cancelled`` when the exchange has ended (the response arrived and
    ///   curl stopped sending, the caller stopped, the body is being sent again from its first byte) or
    ///   the producing task was cancelled; ``TransportError/Code/bodyLengthMismatch`` when the bytes go
    ///   past the declared length (none of them are sent).
    public func write(_ bytes: some Collection<UInt8> & Sendable) async throws(TransportError) {
        try await write(Self.slice(bytes))
    }

    /// Writes the UTF-8 bytes of `string`.
    ///
    /// - Throws: As ``write(_:)-(Collection<UInt8>Sendable)``.
    public func write(_ string: String) async throws(TransportError) {
        try await write(ArraySlice(string.utf8))
    }

    func write(_ chunk: ArraySlice<UInt8>) async throws(TransportError) {
        switch destination {
        case .engine(let exchange, let generation):
            try await Self.write(chunk, to: exchange, generation: generation)
        case .compressing(let compressor):
            try await compressor.compress(chunk)
        case .forwarding(let write):
            try await write(chunk)
        }
    }

    private static func write(
        _ chunk: ArraySlice<UInt8>, to exchange: Exchange, generation: Int
    ) async throws(TransportError) {
        if Task.isCancelled { throw TransportError(.cancelled, message: "the task producing the request body was cancelled") }
        guard try exchange.write(chunk, generation: generation) else { return }
        await withTaskCancellationHandler {
            await exchange.waitForRoom(generation: generation)
        } onCancel: {
            exchange.releaseProducer()
        }
        if Task.isCancelled { throw TransportError(.cancelled, message: "the task producing the request body was cancelled") }
    }

    /// The bytes as an array slice: arrays and slices as they are, other collections copied once.
    private static func slice(_ bytes: some Collection<UInt8>) -> ArraySlice<UInt8> {
        if let slice = bytes as? ArraySlice<UInt8> { return slice }
        if let array = bytes as? [UInt8] { return array[...] }
        return ArraySlice(bytes)
    }
}
