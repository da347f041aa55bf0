// Curlew — another library's async sequence of chunks read as a response body's source.

/// Reads another library's async sequence for a ``ResponseBodyStream``: the body's reader fetches the next chunk
/// when it waits for bytes, then polls it.
///
/// `@unchecked Sendable`: confined to the body's one reader (a body is iterated once, and its reader
/// awaits each fetch before it polls or fetches again), so the iterator and the fetched chunk need no lock.
final class ChunkSequenceReader: @unchecked Sendable {
    private let pull: () async throws -> ArraySlice<UInt8>?
    private var fetched: Result<ArraySlice<UInt8>?, TransportError>?

    init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == ArraySlice<UInt8> {
        var iterator: Chunks.AsyncIterator?
        pull = {
            var current = iterator ?? chunks.makeAsyncIterator()
            let chunk = try await current.next()
            iterator = current
            return chunk
        }
    }

    /// Waits for the sequence's next chunk, its end or its failure (once fetched, until taken).
    func fetch() async {
        guard fetched == nil else { return }
        do {
            fetched = .success(try await pull())
        } catch let error as TransportError {
            fetched = .failure(error)
        } catch {
            var failure = TransportError(.invalidResponse, message: "the response body's source failed: \(error)")
            failure.underlying = error
            fetched = .failure(failure)
        }
    }

    /// What the last fetch found, handed out once; nil before a fetch.
    func take() -> Result<ArraySlice<UInt8>?, TransportError>? {
        defer { fetched = nil }
        return fetched
    }
}
