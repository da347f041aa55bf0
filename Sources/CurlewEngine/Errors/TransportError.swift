// Curlew — the engine's typed transport error.

/// A failure to carry out an HTTP exchange: the request never got a complete response.
///
/// Transport errors are thrown, never returned as a response. Each carries a stable ``Code``,
/// a human-readable ``message`` (for curl failures, curl's own `CURLOPT_ERRORBUFFER` text) and
/// what was requested.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable identifier for the kind of failure. New codes may be added in minor releases.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The URL could not be parsed, or its scheme is not `http` or `https`. Nothing was sent.
        public static let invalidURL = Code("invalidURL")
        /// A header name or value contains CR, LF or NUL, or the name is not an HTTP token. Nothing was sent.
        public static let invalidHeader = Code("invalidHeader")
        /// The request body could not be produced: a file that cannot be opened or read, a range outside
        /// the file. Nothing was sent.
        public static let invalidBody = Code("invalidBody")
        /// A request body's producer threw; ``TransportError/underlying`` holds its error. Nothing more
        /// of the body was sent.
        public static let requestBodyFailed = Code("requestBodyFailed")
        /// A request body produced more or fewer bytes than it declared (a stream's `length`, or a file
        /// that shrank or grew while it was sent). Nothing beyond the declared length was sent.
        public static let bodyLengthMismatch = Code("bodyLengthMismatch")
        /// A streamed response body was read a second time, or after the closure it was handed to had
        /// returned.
        public static let bodyUnavailable = Code("bodyUnavailable")
        /// The host name could not be resolved.
        public static let dnsFailure = Code("dnsFailure")
        /// No connection could be established (refused, unreachable).
        public static let cannotConnect = Code("cannotConnect")
        /// A timeout expired; ``TransportError/timeout`` says which one.
        public static let timedOut = Code("timedOut")
        /// The TLS handshake or certificate verification failed.
        public static let tlsFailure = Code("tlsFailure")
        /// The decoded response body exceeded the configured maximum.
        public static let bodyTooLarge = Code("bodyTooLarge")
        /// The response head exceeded the configured maximum.
        public static let headersTooLarge = Code("headersTooLarge")
        /// The server closed the connection before the response was complete.
        public static let connectionClosed = Code("connectionClosed")
        /// The connection was reset or failed while sending or receiving.
        public static let connectionReset = Code("connectionReset")
        /// The response was malformed (for example two different `Content-Length` values).
        public static let invalidResponse = Code("invalidResponse")
        /// The response body could not be decoded according to its `Content-Encoding`.
        public static let badContentEncoding = Code("badContentEncoding")
        /// The calling task was cancelled; the transfer was aborted.
        public static let cancelled = Code("cancelled")
        /// The session was shut down before the transfer finished.
        public static let sessionShutDown = Code("sessionShutDown")
        /// A redirect was refused: https to http, a scheme other than http(s), a `Location` that cannot
        /// be parsed, or a custom policy's refusal. ``TransportError/location`` holds the `Location`.
        public static let redirectRefused = Code("redirectRefused")
        /// More redirects than the policy allows, or a loop back to a request already made.
        public static let tooManyRedirects = Code("tooManyRedirects")
        /// A 307 or 308 redirect resends the body, or a retry would, and the body cannot be sent again.
        public static let bodyNotReplayable = Code("bodyNotReplayable")
        /// The server reset this request's HTTP/2 stream (RST_STREAM); other requests on the connection
        /// are unaffected. (A stream the server refused before processing it is retried by libcurl.)
        public static let streamReset = Code("streamReset")
        /// The HTTP/2 connection failed: a framing error libcurl detected, or the server sent GOAWAY before
        /// processing this request (which may then be sent again; later requests use a new connection).
        /// A server that ends the connection before answering gives ``connectionClosed``.
        public static let http2ConnectionFailed = Code("http2ConnectionFailed")
        /// A download's file could not be written: the disk is full, the destination (or its directory)
        /// cannot be created or written, a file is already there and may not be replaced, or the
        /// destination closure threw (its error is ``TransportError/underlying``). The message has the
        /// system's reason.
        public static let fileWriteFailed = Code("fileWriteFailed")
        /// A resumed download's answer does not continue its partial file: a 206 whose `Content-Range`
        /// starts elsewhere, or a 416 for a file that is not complete. The partial file is removed.
        public static let resumeMismatch = Code("resumeMismatch")
        /// The libcurl library the process loaded is older than ``LibcurlVersion/minimumSupported``; no
        /// session starts on it. The message names the version found and the one required.
        public static let unsupportedLibcurl = Code("unsupportedLibcurl")
        /// Any other libcurl failure; ``TransportError/curlCode`` holds curl's code.
        public static let curl = Code("curl")

        public var description: String { name }
    }

    /// Which timeout expired.
    public enum Timeout: String, Sendable, Hashable {
        /// Name resolution plus connection establishment (including TLS) took too long.
        case connect
        /// The whole exchange took longer than the total timeout.
        case total
        /// The transfer stayed below the low-speed limit for the low-speed time.
        case lowSpeed
        /// No byte was sent or received for the idle timeout.
        case idle
    }

    /// What kind of failure this is.
    public var code: Code
    /// For ``Code/timedOut``, which timeout expired.
    public var timeout: Timeout?
    /// libcurl's `CURLcode`, when curl reported the failure.
    public var curlCode: Int?
    /// What happened, in words: curl's error-buffer text or the engine's own explanation.
    public var message: String
    /// The requested URL, when known.
    public var url: String?
    /// The request method, when known.
    public var method: String?
    /// For redirect failures, the `Location` that was refused (resolved when it could be).
    public var location: String?
    /// For ``Code/tlsFailure``, why the TLS connection failed.
    public var tlsReason: TLSFailureReason?
    /// For a download that kept its partial file (``DownloadOptions/keepsPartialFile``), what resumes it.
    /// Not compared by `==`.
    public var resumeData: ResumeData?
    /// For ``Code/requestBodyFailed``, the error the body's producer threw; for ``Code/bodyNotReplayable``
    /// from a retry, the failure that would have been retried. Not compared by `==`.
    public var underlying: (any Error & Sendable)?
    /// Whether any byte of a response had arrived when the transfer failed. False for a connection that
    /// closed or reset before the server answered, which a retry policy may treat as "not answered"
    /// (but not as "not processed": the request may have reached the server). Not compared by `==`.
    public var responseBytesReceived = false

    /// Creates a transport error.
    public init(
        _ code: Code, message: String, timeout: Timeout? = nil, curlCode: Int? = nil,
        url: String? = nil, method: String? = nil
    ) {
        self.code = code
        self.message = message
        self.timeout = timeout
        self.curlCode = curlCode
        self.url = url
        self.method = method
    }

    /// Compares everything but ``underlying``, which need not be equatable.
    public static func == (lhs: TransportError, rhs: TransportError) -> Bool {
        lhs.code == rhs.code && lhs.timeout == rhs.timeout && lhs.curlCode == rhs.curlCode && lhs.message == rhs.message
            && lhs.url == rhs.url && lhs.method == rhs.method && lhs.location == rhs.location
            && lhs.tlsReason == rhs.tlsReason
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(timeout)
        hasher.combine(curlCode)
        hasher.combine(message)
        hasher.combine(url)
        hasher.combine(method)
        hasher.combine(location)
        hasher.combine(tlsReason)
    }

    /// True when the error is a cancellation of the calling task.
    public var isCancellation: Bool { code == .cancelled }

    public var description: String {
        var text = "TransportError.\(code)"
        if let timeout { text += "(\(timeout.rawValue))" }
        if let tlsReason { text += "(\(tlsReason.rawValue))" }
        text += ": \(message)"
        if let method, let url { text += " [\(method) \(url)]" } else if let url { text += " [\(url)]" }
        if let location { text += " (Location: \(location))" }
        if let curlCode { text += " (curl \(curlCode))" }
        return text
    }
}
