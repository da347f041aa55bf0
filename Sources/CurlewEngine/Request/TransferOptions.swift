// Curlew — per-request overrides of a session's settings.

/// Settings one request overrides; nil keeps the session's.
///
/// Set them on a ``TransportRequest`` (a request closure or a plugin can), or on a target's or an
/// endpoint's `transferOptions` in the Curlew module.
public struct TransferOptions: Sendable, Hashable {
    private final class Storage: Sendable, Hashable {
        let connectTimeout: Duration?
        let idleTimeout: Duration?
        let maxResponseBodySize: Int?
        let clientIdentity: ClientIdentity?
        let pinnedPublicKeys: [String]?
        let unixSocketPath: String?
        let handlesCookies: Bool?
        let requestCompression: RequestCompression?
        /// Where a call that reports progress is told how far its transfers came (compared by identity).
        let progressReporter: ProgressReporter?
        /// libcurl's receive buffer for this transfer instead of the session's (event streams).
        let receiveBufferSize: Int?
        /// An event stream's attempt: no total timeout, not even the session's.
        let eventStream: Bool
        let timeoutCoversBody: Bool

        init(
            connectTimeout: Duration?, idleTimeout: Duration?, maxResponseBodySize: Int?,
            clientIdentity: ClientIdentity?, pinnedPublicKeys: [String]?, unixSocketPath: String?, handlesCookies: Bool?,
            requestCompression: RequestCompression?, progressReporter: ProgressReporter?, receiveBufferSize: Int?,
            eventStream: Bool, timeoutCoversBody: Bool
        ) {
            self.timeoutCoversBody = timeoutCoversBody
            self.receiveBufferSize = receiveBufferSize
            self.eventStream = eventStream
            self.connectTimeout = connectTimeout
            self.idleTimeout = idleTimeout
            self.maxResponseBodySize = maxResponseBodySize
            self.clientIdentity = clientIdentity
            self.pinnedPublicKeys = pinnedPublicKeys
            self.unixSocketPath = unixSocketPath
            self.handlesCookies = handlesCookies
            self.requestCompression = requestCompression
            self.progressReporter = progressReporter
        }

        static func == (lhs: Storage, rhs: Storage) -> Bool {
            lhs.connectTimeout == rhs.connectTimeout && lhs.idleTimeout == rhs.idleTimeout
                && lhs.maxResponseBodySize == rhs.maxResponseBodySize && lhs.clientIdentity == rhs.clientIdentity
                && lhs.pinnedPublicKeys == rhs.pinnedPublicKeys && lhs.unixSocketPath == rhs.unixSocketPath
                && lhs.handlesCookies == rhs.handlesCookies && lhs.requestCompression == rhs.requestCompression
                && lhs.progressReporter === rhs.progressReporter && lhs.receiveBufferSize == rhs.receiveBufferSize
                && lhs.eventStream == rhs.eventStream && lhs.timeoutCoversBody == rhs.timeoutCoversBody
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(connectTimeout)
            hasher.combine(idleTimeout)
            hasher.combine(maxResponseBodySize)
            hasher.combine(clientIdentity)
            hasher.combine(pinnedPublicKeys)
            hasher.combine(unixSocketPath)
            hasher.combine(handlesCookies)
            hasher.combine(requestCompression)
            hasher.combine(progressReporter.map(ObjectIdentifier.init))
            hasher.combine(receiveBufferSize)
            hasher.combine(eventStream)
            hasher.combine(timeoutCoversBody)
        }
    }

    // Nil when nothing is overridden (nearly every request): the options are then one nil word, which
    // every copy of a request carries for free.
    private var storage: Storage?

    /// No overrides, or the ones given.
    public init(
        connectTimeout: Duration? = nil, idleTimeout: Duration? = nil, maxResponseBodySize: Int? = nil,
        clientIdentity: ClientIdentity? = nil, pinnedPublicKeys: [String]? = nil, unixSocketPath: String? = nil,
        handlesCookies: Bool? = nil, requestCompression: RequestCompression? = nil, timeoutCoversBody: Bool = false
    ) {
        self.init(
            connectTimeout: connectTimeout, idleTimeout: idleTimeout, maxResponseBodySize: maxResponseBodySize,
            clientIdentity: clientIdentity, pinnedPublicKeys: pinnedPublicKeys, unixSocketPath: unixSocketPath,
            handlesCookies: handlesCookies, requestCompression: requestCompression, progressReporter: nil,
            receiveBufferSize: nil, eventStream: false, timeoutCoversBody: timeoutCoversBody)
    }

    private init(
        connectTimeout: Duration?, idleTimeout: Duration?, maxResponseBodySize: Int?, clientIdentity: ClientIdentity?,
        pinnedPublicKeys: [String]?, unixSocketPath: String?, handlesCookies: Bool?,
        requestCompression: RequestCompression?, progressReporter: ProgressReporter?, receiveBufferSize: Int?,
        eventStream: Bool, timeoutCoversBody: Bool
    ) {
        let empty =
            connectTimeout == nil && idleTimeout == nil && maxResponseBodySize == nil && clientIdentity == nil
            && pinnedPublicKeys == nil && unixSocketPath == nil && handlesCookies == nil && requestCompression == nil
            && progressReporter == nil && receiveBufferSize == nil && !eventStream && !timeoutCoversBody
        storage =
            empty
            ? nil
            : Storage(
                connectTimeout: connectTimeout, idleTimeout: idleTimeout, maxResponseBodySize: maxResponseBodySize,
                clientIdentity: clientIdentity, pinnedPublicKeys: pinnedPublicKeys, unixSocketPath: unixSocketPath,
                handlesCookies: handlesCookies, requestCompression: requestCompression,
                progressReporter: progressReporter, receiveBufferSize: receiveBufferSize, eventStream: eventStream,
                timeoutCoversBody: timeoutCoversBody)
    }

    /// Whether any setting is overridden.
    public var isEmpty: Bool { storage == nil }

    /// Overrides ``SessionConfiguration/connectTimeout``.
    public var connectTimeout: Duration? {
        get { storage?.connectTimeout }
        set { update(connectTimeout: newValue) }
    }
    /// Overrides ``SessionConfiguration/idleTimeout`` (the total timeout is ``TransportRequest/timeout``).
    public var idleTimeout: Duration? {
        get { storage?.idleTimeout }
        set { update(idleTimeout: newValue) }
    }
    /// Overrides ``SessionConfiguration/maxResponseBodySize``.
    public var maxResponseBodySize: Int? {
        get { storage?.maxResponseBodySize }
        set { update(maxResponseBodySize: newValue) }
    }
    /// A client certificate for this request instead of the session's; connections made with different
    /// identities are never shared.
    public var clientIdentity: ClientIdentity? {
        get { storage?.clientIdentity }
        set { update(clientIdentity: newValue) }
    }
    /// Public-key pins for this request's host instead of the session's (see
    /// ``SessionConfiguration/TLS/pinnedPublicKeys``).
    public var pinnedPublicKeys: [String]? {
        get { storage?.pinnedPublicKeys }
        set { update(pinnedPublicKeys: newValue) }
    }
    /// Connect through this Unix domain socket instead of TCP; the URL still names the host (for the
    /// `Host` field and TLS). Connections through different sockets are never shared.
    public var unixSocketPath: String? {
        get { storage?.unixSocketPath }
        set { update(unixSocketPath: newValue) }
    }

    /// Whether the session's cookie jar takes part in this request (sending its cookies and storing
    /// the response's): false opts out, as `URLRequest.httpShouldHandleCookies = false` does; nil keeps
    /// the session's setting.
    public var handlesCookies: Bool? {
        get { storage?.handlesCookies }
        set { update(handlesCookies: newValue) }
    }

    /// Compresses this request's body before it is sent, with `Content-Encoding` set (see
    /// ``RequestCompression``); nil: sent as it is.
    public var requestCompression: RequestCompression? {
        get { storage?.requestCompression }
        set { update(requestCompression: newValue) }
    }

    /// Whether the total timeout (``TransportRequest/timeout``, else the session's) also bounds a streamed
    /// response's body. Default false: for a streamed response (``CurlSession/perform(_:isolation:handler:)``,
    /// a provider's `stream`, a download) the total timeout stops when the final head arrives, which suits
    /// event streams and long downloads, and only the idle timeout watches the body. With true the whole
    /// exchange — queue, redirects, head and body — must end within the total timeout, or the body's read
    /// fails with ``TransportError/Code/timedOut``. A buffered request's total timeout always covers its body.
    public var timeoutCoversBody: Bool {
        get { storage?.timeoutCoversBody ?? false }
        set { update(timeoutCoversBody: newValue) }
    }

    /// Where the transfers of a call that reports progress report to (set by the progress sequences).
    package var progressReporter: ProgressReporter? {
        get { storage?.progressReporter }
        set { update(progressReporter: .some(newValue)) }
    }

    /// libcurl's receive buffer for this transfer instead of the session's
    /// (``SessionConfiguration/receiveBufferSize``); set for event streams.
    package var receiveBufferSize: Int? {
        get { storage?.receiveBufferSize }
        set { update(receiveBufferSize: .some(newValue)) }
    }

    /// The receive buffer of an event stream: most events are far smaller, and ten thousand idle streams
    /// should not each hold the session's 64 KiB.
    package static let eventStreamReceiveBufferSize = 16 * 1024

    /// Whether these are an event stream's options: its transfers have no total timeout, not even the
    /// session's (the idle timeout watches them).
    package var eventStream: Bool { storage?.eventStream ?? false }

    /// These options for an event stream: no total timeout, the given idle timeout unless one is set,
    /// and the smaller receive buffer.
    package func forEventStream(idleTimeout: Duration?) -> TransferOptions {
        var options = self
        if options.idleTimeout == nil, let idleTimeout { options.idleTimeout = idleTimeout }
        if options.receiveBufferSize == nil { options.receiveBufferSize = Self.eventStreamReceiveBufferSize }
        options.update(eventStream: true)
        return options
    }

    private mutating func update(
        connectTimeout: Duration?? = nil, idleTimeout: Duration?? = nil, maxResponseBodySize: Int?? = nil,
        clientIdentity: ClientIdentity?? = nil, pinnedPublicKeys: [String]?? = nil, unixSocketPath: String?? = nil,
        handlesCookies: Bool?? = nil, requestCompression: RequestCompression?? = nil,
        progressReporter: ProgressReporter?? = nil, receiveBufferSize: Int?? = nil, eventStream: Bool? = nil,
        timeoutCoversBody: Bool? = nil
    ) {
        self = TransferOptions(
            connectTimeout: connectTimeout ?? self.connectTimeout, idleTimeout: idleTimeout ?? self.idleTimeout,
            maxResponseBodySize: maxResponseBodySize ?? self.maxResponseBodySize,
            clientIdentity: clientIdentity ?? self.clientIdentity,
            pinnedPublicKeys: pinnedPublicKeys ?? self.pinnedPublicKeys,
            unixSocketPath: unixSocketPath ?? self.unixSocketPath, handlesCookies: handlesCookies ?? self.handlesCookies,
            requestCompression: requestCompression ?? self.requestCompression,
            progressReporter: progressReporter ?? self.progressReporter,
            receiveBufferSize: receiveBufferSize ?? self.receiveBufferSize, eventStream: eventStream ?? self.eventStream,
            timeoutCoversBody: timeoutCoversBody ?? self.timeoutCoversBody)
    }
}
