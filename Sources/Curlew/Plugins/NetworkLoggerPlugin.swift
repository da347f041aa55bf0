// Curlew — logs requests and responses (through swift-log by default), with secrets redacted.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import Logging

/// Logs each request as it goes on the wire and each result, through a swift-log `Logger` or an
/// output of your own.
///
/// The request shown is what the transport sends: the session's own fields (`User-Agent`,
/// `Accept-Encoding`) appear with the target's and the plugins'. `Authorization`,
/// `Proxy-Authorization`, `Cookie` and `Set-Cookie` values, any header named in
/// ``Configuration/redactedHeaders`` and a password in the URL are replaced by `<redacted>` before a
/// formatter or an output sees them.
public struct NetworkLoggerPlugin: PluginType {
    /// What the plugin logs, how each entry reads and where it goes.
    public struct Configuration: Sendable {
        /// Parts of an exchange the plugin can log.
        public struct LogOptions: OptionSet, Sendable, Hashable {
            public let rawValue: Int
            public init(rawValue: Int) { self.rawValue = rawValue }

            /// The request's method and URL.
            public static let requestMethod = LogOptions(rawValue: 1 << 0)
            /// The request's header fields.
            public static let requestHeaders = LogOptions(rawValue: 1 << 1)
            /// The request's body.
            public static let requestBody = LogOptions(rawValue: 1 << 2)
            /// The request as a `curl` command line instead of the separate request parts.
            public static let formatRequestAscURL = LogOptions(rawValue: 1 << 3)
            /// The response body when the exchange succeeded.
            public static let successResponseBody = LogOptions(rawValue: 1 << 4)
            /// The response body when the exchange failed.
            public static let errorResponseBody = LogOptions(rawValue: 1 << 5)
            /// The response's header fields.
            public static let responseHeaders = LogOptions(rawValue: 1 << 6)

            /// Method, URL and headers of requests; status of responses.
            public static let `default`: LogOptions = [.requestMethod, .requestHeaders]
            /// Everything.
            public static let verbose: LogOptions = [
                .requestMethod, .requestHeaders, .requestBody, .successResponseBody, .errorResponseBody,
                .responseHeaders,
            ]
        }

        /// How entries and bodies read.
        public struct Formatter: Sendable {
            /// Turns one entry into a line: an identifier such as `Request` or `Response body`, its
            /// (already redacted) message, and the target (the wrapped one under ``MultiTarget``).
            public typealias EntryFormatter = @Sendable (_ identifier: String, _ message: String, _ target: any TargetType) -> String
            /// Turns a body into text.
            public typealias DataFormatter = @Sendable (_ data: Data) -> String

            /// Formats each entry. Default: `"<identifier>: <message>"`.
            public var entry: EntryFormatter
            /// Formats request bodies; nil: UTF-8 text cut at ``Configuration/bodyLimit`` bytes.
            public var requestData: DataFormatter?
            /// Formats response bodies; nil: UTF-8 text cut at ``Configuration/bodyLimit`` bytes.
            public var responseData: DataFormatter?

            /// Creates a formatter.
            ///
            /// - Parameters:
            ///   - entry: Formats each entry.
            ///   - requestData: Formats request bodies, or nil for the default.
            ///   - responseData: Formats response bodies, or nil for the default.
            public init(
                entry: @escaping EntryFormatter = Formatter.defaultEntry, requestData: DataFormatter? = nil,
                responseData: DataFormatter? = nil
            ) {
                self.entry = entry
                self.requestData = requestData
                self.responseData = responseData
            }

            /// `"<identifier>: <message>"`.
            @Sendable public static func defaultEntry(_ identifier: String, _ message: String, _ target: any TargetType) -> String {
                "\(identifier): \(message)"
            }
        }

        /// Receives the formatted entries of one request or one result, with the level they deserve
        /// (``level`` for requests and successes, `.error` for failures, `.info` for cancellations).
        public typealias Output = @Sendable (_ target: any TargetType, _ entries: [String], _ level: Logger.Level) -> Void

        /// The logger written to when ``output`` is nil.
        public var logger: Logger
        /// The level used for requests and successful exchanges.
        public var level: Logger.Level
        /// What to log.
        public var logOptions: LogOptions
        /// Header names whose values are replaced by `<redacted>`, in addition to the defaults.
        public var redactedHeaders: Set<String>
        /// Longest body the default body formatters show, in bytes; longer bodies are cut with a note.
        public var bodyLimit: Int
        /// How entries and bodies read.
        public var formatter: Formatter
        /// Where entries go; nil: ``logger``, one message per request or result, entries joined by newlines.
        public var output: Output?

        /// Creates a configuration.
        public init(
            logger: Logger = Logger(label: "curlew.network"), level: Logger.Level = .info,
            logOptions: LogOptions = .default, redactedHeaders: Set<String> = [], bodyLimit: Int = 4096,
            formatter: Formatter = Formatter(), output: Output? = nil
        ) {
            self.logger = logger
            self.level = level
            self.logOptions = logOptions
            self.redactedHeaders = redactedHeaders
            self.bodyLimit = bodyLimit
            self.formatter = formatter
            self.output = output
        }
    }

    /// Header names always redacted.
    public static let defaultRedactedHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// The configuration in use.
    public let configuration: Configuration

    /// Creates the plugin.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Logs the request as it goes on the wire.
    public func willSend(_ request: TransportRequest, target: any TargetType) async {
        guard wants(configuration.level) else { return }
        let target = MultiTarget.unwrapped(target)
        let options = configuration.logOptions
        var entries: [String] = []
        if options.contains(.formatRequestAscURL) {
            entries.append(entry("Request", curlCommand(for: request), target))
        } else {
            if options.contains(.requestMethod) {
                entries.append(entry("Request", "\(request.method.rawValue) \(redactedURL(request.url))", target))
            }
            if options.contains(.requestHeaders) {
                entries.append(entry("Request headers", describe(request.headerFields), target))
            }
            if options.contains(.requestBody), let body = request.body {
                // A file or a stream is read while the request runs: it is named, not logged.
                let text = body.inMemoryBytes.map { format($0, configuration.formatter.requestData) } ?? "(\(body))"
                entries.append(entry("Request body", text, target))
            }
        }
        emit(entries, level: configuration.level, target: target)
    }

    /// Logs the response (status, and headers and body as configured) or the failure.
    public func didReceive(_ result: Result<ApiResponse, CurlewError>, target: any TargetType) async {
        let target = MultiTarget.unwrapped(target)
        let options = configuration.logOptions
        let responseData = configuration.formatter.responseData
        switch result {
        case .success(let response):
            guard wants(configuration.level) else { return }
            let source = response.request.map { redactedURL($0.url) } ?? "stub"
            let size =
                if let download = response.download {
                    "\(download.fileSize) bytes to \(download.filePath)"
                } else {
                    response.isStreamed ? "streamed" : "\(response.data.count) bytes"
                }
            var entries = [entry("Response", "\(response.statusCode) for \(source) (\(size))", target)]
            if options.contains(.responseHeaders) {
                entries.append(entry("Response headers", describe(response.headerFields), target))
            }
            // A streamed body goes to its reader as it arrives, a download's to its file: nothing here to log.
            if options.contains(.successResponseBody), !response.isStreamed, response.download == nil {
                entries.append(entry("Response body", format(response.data, responseData), target))
            }
            emit(entries, level: configuration.level, target: target)
        case .failure(let error):
            let level: Logger.Level = error.isCancellation ? .info : .error
            guard wants(level) else { return }
            var entries = [entry("Request failed", "\(error)", target)]
            if let response = error.response {
                if options.contains(.responseHeaders) {
                    entries.append(entry("Response headers", describe(response.headerFields), target))
                }
                if options.contains(.errorResponseBody), !response.isStreamed, response.download == nil {
                    entries.append(entry("Response body", format(response.data, responseData), target))
                }
            }
            emit(entries, level: level, target: target)
        }
    }

    /// A `curl` command line that repeats the request, redacted values excepted. `--compressed` is
    /// added when the request asks for compressed responses, so the replay decodes them too. A body that
    /// is neither in memory nor one file (a stream, a multipart form with files) cannot be given on the
    /// command line: a trailing shell comment describes it, so the line does not pass for the request.
    public func curlCommand(for request: TransportRequest) -> String {
        var parts = ["curl"]
        if request.method != .get { parts += ["-X", request.method.rawValue] }
        for field in request.headerFields {
            parts += ["-H", Self.shellQuoted("\(field.name.rawName): \(value(of: field))")]
        }
        if let body = request.body?.inMemoryBytes, !body.isEmpty {
            parts += ["--data-binary", Self.shellQuoted(String(decoding: body, as: UTF8.self))]
        } else if let path = request.body?.filePath {
            parts += ["--data-binary", Self.shellQuoted("@" + path)]
        }
        if request.headerFields[.acceptEncoding] != nil { parts.append("--compressed") }
        parts.append(Self.shellQuoted(redactedURL(request.url)))
        if let body = request.body, body.inMemoryBytes == nil, body.filePath == nil {
            parts.append("# body not shown: " + String(describing: body).split(whereSeparator: \.isNewline).joined(separator: " "))
        }
        return parts.joined(separator: " ")
    }

    /// Whether anything logged at `level` would be seen; a custom output sees everything.
    private func wants(_ level: Logger.Level) -> Bool {
        configuration.output != nil || configuration.logger.logLevel <= level
    }

    private func entry(_ identifier: String, _ message: String, _ target: any TargetType) -> String {
        configuration.formatter.entry(identifier, message, target)
    }

    private func emit(_ entries: [String], level: Logger.Level, target: any TargetType) {
        guard !entries.isEmpty else { return }
        if let output = configuration.output {
            output(target, entries, level)
        } else {
            configuration.logger.log(level: level, "\(entries.joined(separator: "\n"))")
        }
    }

    private func isRedacted(_ name: HTTPField.Name) -> Bool {
        let lowercased = name.canonicalName
        return Self.defaultRedactedHeaders.contains(lowercased)
            || configuration.redactedHeaders.contains { $0.lowercased() == lowercased }
    }

    private func value(of field: HTTPField) -> String {
        isRedacted(field.name) ? "<redacted>" : field.value
    }

    private func describe(_ fields: HTTPFields) -> String {
        "[" + fields.map { "\($0.name.rawName): \(value(of: $0))" }.joined(separator: ", ") + "]"
    }

    private func format(_ body: Data, _ custom: Configuration.Formatter.DataFormatter?) -> String {
        if let custom { return custom(body) }
        let shown = body.prefix(configuration.bodyLimit)
        let text = String(decoding: shown, as: UTF8.self)
        return body.count > shown.count ? "\(text)… (\(body.count) bytes)" : text
    }

    /// The URL with the password of any `user:password@` part replaced by `<redacted>`.
    private func redactedURL(_ url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return url }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = url[authorityStart...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        let authority = url[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return url }
        return String(url[..<url.index(after: colon)]) + "<redacted>" + String(url[at...])
    }

    /// Single-quotes for POSIX shells: `'` becomes `'\''`.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }
}
