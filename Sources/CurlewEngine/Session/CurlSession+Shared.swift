// Curlew — the process-wide default session.

extension CurlSession {
    /// A session with the default configuration, created on first use and kept for the process's life.
    ///
    /// If it cannot start — the loaded libcurl is older than ``LibcurlVersion/minimumSupported``, or no
    /// file descriptors or threads are left — every request through it fails with the start-up error
    /// (``TransportError/Code/unsupportedLibcurl`` for the first) instead of the process crashing.
    public static let shared: any HTTPTransport = {
        do throws(TransportError) {
            let session = try CurlSession()
            processDefault.withLock { $0 = ObjectIdentifier(session) }
            return session
        } catch {
            return UnavailableTransport(error: error)
        }
    }()

    /// The session ``shared`` made, once it has (read without making it).
    private static let processDefault = Locked<ObjectIdentifier?>(nil)

    /// Whether ``shared`` has made its session (read without making it).
    package static var hasMadeShared: Bool { processDefault.withLock { $0 } != nil }

    /// Whether this is the process-wide default session, which no service group may stop.
    package var isProcessDefault: Bool { Self.processDefault.withLock { $0 } == ObjectIdentifier(self) }
}

/// A transport that could not start: every request fails with the reason.
struct UnavailableTransport: HTTPTransport {
    let error: TransportError

    func execute(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        throw error
    }
}
