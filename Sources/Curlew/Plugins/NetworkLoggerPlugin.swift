// Curlew — logs requests and responses through swift-log, with secrets redacted.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import Logging

/// Logs each request and its result through a swift-log `Logger`.
///
/// `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` values are redacted by default,
/// plus any header named in ``Configuration/redactedHeaders``.
public struct NetworkLoggerPlugin: PluginType {
    /// What the plugin logs and how.
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

        /// The logger to write to.
        public var logger: Logger
        /// The level used for successful exchanges (failures log at `.error`, or `.info` for cancellation).
        public var level: Logger.Level
        /// What to log.
        public var logOptions: LogOptions
        /// Header names whose values are replaced by `<redacted>`, in addition to the defaults.
        public var redactedHeaders: Set<String>
        /// Longest body logged, in bytes; longer bodies are cut with a note.
        public var bodyLimit: Int

        /// Creates a configuration.
        public init(
            logger: Logger = Logger(label: "curlew.network"), level: Logger.Level = .info,
            logOptions: LogOptions = .default, redactedHeaders: Set<String> = [], bodyLimit: Int = 4096
        ) {
            self.logger = logger
            self.level = level
            self.logOptions = logOptions
            self.redactedHeaders = redactedHeaders
            self.bodyLimit = bodyLimit
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

    public func willSend(_ request: TransportRequest, target: any TargetType) async {
        let options = configuration.logOptions
        guard configuration.logger.logLevel <= configuration.level else { return }
        if options.contains(.formatRequestAscURL) {
            configuration.logger.log(level: configuration.level, "Request: \(curlCommand(for: request))")
            return
        }
        var lines: [String] = []
        if options.contains(.requestMethod) { lines.append("Request: \(request.method.rawValue) \(request.url)") }
        if options.contains(.requestHeaders) { lines.append("Request headers: \(describe(request.headerFields))") }
        if options.contains(.requestBody), let body = request.body?.inMemoryBytes {
            lines.append("Request body: \(describe(body))")
        }
        if !lines.isEmpty { configuration.logger.log(level: configuration.level, "\(lines.joined(separator: "\n"))") }
    }

    public func didReceive(_ result: Result<ApiResponse, CurlewError>, target: any TargetType) async {
        let options = configuration.logOptions
        switch result {
        case .success(let response):
            guard configuration.logger.logLevel <= configuration.level else { return }
            var lines = ["Response: \(response.statusCode) for \(response.request?.url ?? "stub") (\(response.data.count) bytes)"]
            if options.contains(.responseHeaders) { lines.append("Response headers: \(describe(response.headerFields))") }
            if options.contains(.successResponseBody) { lines.append("Response body: \(describe(response.data))") }
            configuration.logger.log(level: configuration.level, "\(lines.joined(separator: "\n"))")
        case .failure(let error):
            let level: Logger.Level = error.isCancellation ? .info : .error
            var lines = ["Request failed: \(error)"]
            if let response = error.response {
                if options.contains(.responseHeaders) { lines.append("Response headers: \(describe(response.headerFields))") }
                if options.contains(.errorResponseBody) { lines.append("Response body: \(describe(response.data))") }
            }
            configuration.logger.log(level: level, "\(lines.joined(separator: "\n"))")
        }
    }

    /// A `curl` command line that repeats the request (redacted headers excepted).
    public func curlCommand(for request: TransportRequest) -> String {
        var parts = ["curl"]
        if request.method != .get { parts += ["-X", request.method.rawValue] }
        for field in request.headerFields {
            parts += ["-H", Self.shellQuoted("\(field.name.rawName): \(value(of: field))")]
        }
        if let body = request.body?.inMemoryBytes, !body.isEmpty {
            parts += ["--data-binary", Self.shellQuoted(String(decoding: body, as: UTF8.self))]
        }
        parts.append(Self.shellQuoted(request.url))
        return parts.joined(separator: " ")
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

    private func describe(_ body: Data) -> String {
        let shown = body.prefix(configuration.bodyLimit)
        let text = String(decoding: shown, as: UTF8.self)
        return body.count > shown.count ? "\(text)… (\(body.count) bytes)" : text
    }

    /// Single-quotes for POSIX shells: `'` becomes `'\''`.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }
}
