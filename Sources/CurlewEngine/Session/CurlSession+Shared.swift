// Curlew — the process-wide default session.

extension CurlSession {
    /// A session with the default configuration, created on first use and kept for the process's life.
    ///
    /// If it cannot start — the loaded libcurl is older than ``LibcurlVersion/minimumSupported``, or no
    /// file descriptors or threads are left — every request through it fails with the start-up error
    /// (``TransportError/Code/unsupportedLibcurl`` for the first) instead of the process crashing.
    public static let shared: any HTTPTransport = {
        do throws(TransportError) {
            return try CurlSession()
        } catch {
            return UnavailableTransport(error: error)
        }
    }()
}

/// A transport that could not start: every request fails with the reason.
struct UnavailableTransport: HTTPTransport {
    let error: TransportError

    func execute(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        throw error
    }
}
