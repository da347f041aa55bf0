// Curlew — putting one request onto an easy handle.

import CCurl
import CCurlShims
import HTTPTypes
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

extension TransferContext {
    /// Sets URL, method, header fields and body for this transfer on its easy handle. `timeout` is what
    /// is left of the total timeout (nanoseconds): the state machine ends the transfer then; curl gets a
    /// backstop one second later, which only a stalled loop would ever reach. A streamed response gets
    /// none (its total timeout ends with the head) and no low-speed check, and curl does not decode it:
    /// the reader does (see ``ContentDecoder``).
    ///
    /// - Returns: Why the request cannot start (a file body that cannot be opened), or nil.
    func applyRequest(defaults: HandleDefaults, timeout: UInt64?) -> TransportError? {
        // Read through `transfer` rather than from local copies: copying the request costs a dozen
        // reference counts per transfer.
        let easy = handle
        let me = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        let key = exchange.request.poolKey
        let options = exchange.request.request.options
        let streamedResponse = exchange.streamsResponse
        // A handle that kept another shape's options starts again from the defaults.
        let shape = plainShape(defaults: defaults)
        if residue != .defaults, residue != shape { EasyHandlePool.reset(easy, defaults) }
        let keptTLS = key.isHTTPS && shape != nil && residue == shape
        residueAfter = shape
        easy.set(CURLOPT_PRIVATE, me)
        easy.set(CURLOPT_WRITEDATA, me)
        easy.set(CURLOPT_HEADERDATA, me)
        easy.set(CURLOPT_OPENSOCKETDATA, me)
        easy.set(CURLOPT_CURLU, UnsafeRawPointer(exchange.request.url.handle))
        // The URL string too, the handle's own normalised form, on every version: libcurl through 8.11 at
        // least formats it from the handle only when no string is set (a kept handle would report the last
        // request's URL as the effective one), and formatting costs more than this copy; 8.21 reads the
        // handle always, and the string is then only a copy.
        easy.set(CURLOPT_URL, exchange.request.url.normalized.map { UnsafeRawPointer($0) })
        if streamedResponse {
            // The engine undoes chunked framing itself, to see a body's end before the transfer's.
            easy.set(CURLOPT_HTTP_TRANSFER_DECODING, 0)
            easy.set(CURLOPT_LOW_SPEED_TIME, 0)
        } else {
            // Always, 0 included: a kept handle may hold the last request's.
            easy.set(CURLOPT_TIMEOUT_MS, timeout.map { Int(clamping: ($0 + 999_999) / 1_000_000 + 1000) } ?? 0)
        }
        easy.set(CURLOPT_HTTP_VERSION, defaults.curlHTTPVersion(key))
        // Wait for a connection being made to this host rather than open another, when it may carry
        // several requests: a burst then shares one HTTP/2 connection.
        if defaults.mayMultiplex(key) {
            easy.set(CURLOPT_PIPEWAIT, 1)
            // Counts the transfers on the key's connections (see `LoopThread.noteAttached`); the pool's
            // reset clears it again.
            _ = curlew_easy_setopt_prereq_callback(easy.raw, CurlCallbacks.prereq)
            easy.set(CURLOPT_PREREQDATA, me)
        } else if defaults.needsOwnConnection(key) {
            easy.set(CURLOPT_FRESH_CONNECT, 1)
            easy.set(CURLOPT_FORBID_REUSE, 1)
        }
        // The session's TLS options, unless the handle kept them from a plain https request.
        if key.isHTTPS, !keptTLS {
            easy.applyTLS(defaults.tls, host: key.host, options: options, identities: &defaults.identityVariants)
        }
        if !options.isEmpty {
            if let connect = options.connectTimeout { easy.set(CURLOPT_CONNECTTIMEOUT_MS, max(1, connect.milliseconds)) }
            if let path = options.unixSocketPath { easy.set(CURLOPT_UNIX_SOCKET_PATH, string: path) }
            // The pool resets the handle to the session's buffer before its next transfer.
            if let size = options.receiveBufferSize { easy.set(CURLOPT_BUFFERSIZE, min(max(size, 1024), 10 * 1024 * 1024)) }
        }
        if let jar = defaults.cookieShare {
            if options.handlesCookies != false {
                _ = curlew_easy_setopt_share(easy.raw, jar)
                // Turns the engine on; the jar is the share's. Without COOKIEFILE where its list leaks at
                // each reset (CurlQuirks.cookieFileListLeaksOnReset).
                if defaults.quirks.cookieFileListLeaksOnReset {
                    easy.set(CURLOPT_COOKIEJAR, nil)
                } else {
                    easy.set(CURLOPT_COOKIEFILE, string: "")
                }
            } else {
                // `curl_easy_reset` keeps a handle's share: a pooled handle that held the jar would still
                // send its cookies. Moving it to the jar-less share detaches it from the jar.
                _ = curlew_easy_setopt_share(easy.raw, defaults.share)
            }
        }
        if !shard.hasHostOverrides, let resolve = defaults.resolveList {
            // Until a transfer of this shard has started connecting (see `LoopThread.openSocket`):
            // libcurl then holds the entries in the shard's DNS cache for good.
            easy.set(CURLOPT_RESOLVE, UnsafeRawPointer(resolve))
        }

        if let progress {
            progress.begin(expectedBytesToSend: exchange.request.request.body.map { $0.knownLength } ?? 0)
            easy.set(CURLOPT_NOPROGRESS, 0)
            _ = curlew_easy_setopt_xferinfo_callback(easy.raw, CurlCallbacks.progress)
            easy.set(CURLOPT_XFERINFODATA, me)
        }
        let method = exchange.request.request.method
        var body = BodyLines.none
        if method == .head {
            easy.set(CURLOPT_NOBODY, 1)
        } else if let requestBody = exchange.request.request.body {
            if case .bytes(let data) = requestBody.storage, !exchange.sendsTrailers {
                body = .length(data.count)
                setBody(data)
            } else {
                switch feed(for: requestBody) {
                case .success(let feed): upload = feed
                case .failure(let error): return error
                }
                let chunked = exchange.sendsTrailers || requestBody.knownLength == nil
                body = chunked ? .unknown : .length(requestBody.knownLength ?? 0)
                easy.set(CURLOPT_POST, 1)
                _ = curlew_easy_setopt_data_callback(easy.raw, CURLOPT_READFUNCTION, CurlCallbacks.read)
                easy.set(CURLOPT_READDATA, me)
                _ = curlew_easy_setopt_seek_callback(easy.raw, CurlCallbacks.seek)
                easy.set(CURLOPT_SEEKDATA, me)
                _ = curlew_easy_setopt_off(easy.raw, CURLOPT_POSTFIELDSIZE_LARGE, chunked ? -1 : curl_off_t(requestBody.knownLength ?? 0))
                if exchange.sendsTrailers {
                    _ = curlew_easy_setopt_trailer_callback(easy.raw, CurlCallbacks.trailers)
                    easy.set(CURLOPT_TRAILERDATA, me)
                    if defaults.quirks.trailersSpoilTheHandle {
                        // A handle that sent trailers corrupts memory when it uploads again, which libcurl's
                        // own retry of a request on a dead reused connection does: such a request never
                        // reuses a connection (no retry), and its handle is not pooled (see `recycle`).
                        easy.set(CURLOPT_FRESH_CONNECT, 1)
                    }
                }
            }
            if method != .post { easy.set(CURLOPT_CUSTOMREQUEST, string: method.rawValue) }
        } else if method == .post || method == .put || method == .patch {
            // An explicit empty body makes curl send `Content-Length: 0`, which servers expect here.
            body = .length(0)
            easy.set(CURLOPT_POSTFIELDSIZE_LARGE, 0)
            easy.set(CURLOPT_POSTFIELDS, UnsafeRawPointer(Self.emptyBody.utf8Start))
            if method != .post { easy.set(CURLOPT_CUSTOMREQUEST, string: method.rawValue) }
        } else if method != .get {
            easy.set(CURLOPT_CUSTOMREQUEST, string: method.rawValue)
        }
        // Always set: a kept handle may point at the last request's list (freed since).
        if exchange.request.request.headerFields.isEmpty, body == .none, !streamedResponse {
            // The common case: only the session's default lines, from the list the session keeps.
            easy.set(CURLOPT_HTTPHEADER, defaults.sharedHeaderList.map { UnsafeRawPointer($0) })
        } else {
            headerList = HeaderList.make(fields: exchange.request.request.headerFields, body: body, defaults: defaults)
            easy.set(CURLOPT_HTTPHEADER, headerList.map { UnsafeRawPointer($0) })
        }
        return nil
    }

    /// The shape of a plain request — a GET without a body or a POST of a body in memory, buffered,
    /// without progress, per-request options, cookies, resolve entries, trailers, a connection of its own
    /// or per-host TLS settings — whose options every plain request of the same shape sets again; nil for
    /// any other request (see ``HandleResidue``).
    private func plainShape(defaults: HandleDefaults) -> HandleResidue? {
        // Each field read in place: a local copy of the request would cost a dozen reference counts.
        let key = exchange.request.poolKey
        let posts: Bool
        if let body = exchange.request.request.body {
            guard exchange.request.request.method == .post, case .bytes = body.storage, !exchange.sendsTrailers else { return nil }
            posts = true
        } else {
            guard exchange.request.request.method == .get else { return nil }
            posts = false
        }
        guard exchange.request.request.options.isEmpty, !exchange.streamsResponse,
            progress == nil, defaults.cookieShare == nil, shard.hasHostOverrides || defaults.resolveList == nil,
            !defaults.needsOwnConnection(key),
            !key.isHTTPS || (defaults.tls.pins.isEmpty && defaults.tls.clientIdentity == nil)
        else { return nil }
        return .plain(tls: key.isHTTPS, multiplex: defaults.mayMultiplex(key), posts: posts)
    }

    /// What the header list says about the body.
    enum BodyLines: Equatable {
        /// Whether `Expect: 100-continue` goes with the body for this threshold: a body of unknown length
        /// counts as reaching every threshold.
        func reaches(_ threshold: Int) -> Bool {
            switch self {
            case .none: false
            case .length(let length): length >= threshold
            case .unknown: true
            }
        }

        /// No body lines (no body, or a HEAD).
        case none
        /// A body of this many bytes.
        case length(Int)
        /// A body of a length not known up front (chunked over HTTP/1.1).
        case unknown
    }

    /// Where the read callback takes this request's body from. A file is opened here.
    private func feed(for body: TransportRequest.Body) -> Result<UploadFeed, TransportError> {
        switch body.storage {
        case .bytes(let data):
            return .success(UploadFeed(.memory(data)))
        case .file(let region):
            let descriptor = open(region.path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                return .failure(
                    exchange.request.error(.invalidBody, "cannot open \(region.path): \(FileRegion.describe(errno))"))
            }
            return .success(UploadFeed(.file(descriptor, region)))
        case .segments(let segments):
            // Files are opened one at a time as the read reaches them: a form of thousands of files holds
            // one descriptor.
            return .success(UploadFeed(.segments(segments)))
        case .stream:
            // The producer writes into the exchange's request side, which the read callback drains.
            return .success(UploadFeed(.stream))
        }
    }

    /// A zero-length body that lives for the whole process.
    private static let emptyBody: StaticString = ""

    private func setBody(_ body: Data) {
        handle.set(CURLOPT_POSTFIELDSIZE_LARGE, body.count)
        if body.count <= 64 {
            // Small `Data` values may be stored inline in the struct, where no address outlives the
            // closure: copy those few bytes into memory this context owns until the transfer ends.
            let copy = malloc(max(body.count, 1))
            body.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress, let copy { copy.copyMemory(from: base, byteCount: bytes.count) }
            }
            ownedBody = copy
            handle.set(CURLOPT_POSTFIELDS, UnsafeRawPointer(copy))
        } else {
            // Larger `Data` keeps its bytes in a heap storage object whose address is stable while the
            // value is alive and unmutated. The request (held by `transfer` until this context is
            // dropped, after curl is done with the handle) keeps it alive, so curl reads the caller's
            // bytes in place: CURLOPT_POSTFIELDS does not copy.
            let pointer = body.withUnsafeBytes { UnsafeRawPointer($0.baseAddress) }
            handle.set(CURLOPT_POSTFIELDS, pointer)
        }
    }
}
