// The service's settings, read from the environment.

import Foundation
import Logging

/// The service's settings, from environment variables, so that one build runs against any upstream.
///
/// | Variable | Meaning | Default |
/// | --- | --- | --- |
/// | `UPSTREAM_URL` | The upstream API's base URL | required |
/// | `HOST`, `PORT` | Where this service listens | `127.0.0.1`, `8080` |
/// | `UPSTREAM_TIMEOUT` | Seconds an upstream call may take | `10` |
/// | `SHUTDOWN_GRACE` | Seconds requests in flight may take to finish after SIGTERM | `15` |
/// | `LOG_LEVEL` | `trace` ... `critical` | `info` |
///
/// The upstream timeout must be shorter than the shutdown grace: then every request in flight at SIGTERM
/// ends with an answer (the upstream's, or 504) before the grace runs out, instead of being cut off.
struct GatewayConfiguration: Sendable {
    var upstreamURL: URL
    var host: String
    var port: Int
    var upstreamTimeout: Duration
    var shutdownGrace: Duration
    var logLevel: Logger.Level

    /// Reads the settings from `environment`.
    ///
    /// - Throws: ``ConfigurationError`` naming the first variable that is missing or unusable.
    init(environment: [String: String]) throws(ConfigurationError) {
        guard let text = environment["UPSTREAM_URL"] else {
            throw ConfigurationError("UPSTREAM_URL is not set (e.g. UPSTREAM_URL=http://127.0.0.1:9000)")
        }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme), url.host != nil else {
            throw ConfigurationError("UPSTREAM_URL is not an http or https URL: \(text)")
        }
        upstreamURL = url
        host = environment["HOST"] ?? "127.0.0.1"
        port = try Self.number("PORT", in: environment, default: 8080, range: 0...65535)
        upstreamTimeout = .seconds(try Self.number("UPSTREAM_TIMEOUT", in: environment, default: 10, range: 1...3600))
        shutdownGrace = .seconds(try Self.number("SHUTDOWN_GRACE", in: environment, default: 15, range: 0...3600))
        guard upstreamTimeout < shutdownGrace else {
            throw ConfigurationError(
                "UPSTREAM_TIMEOUT (\(upstreamTimeout)) must be shorter than SHUTDOWN_GRACE (\(shutdownGrace)), "
                    + "or requests in flight at shutdown are cut off without an answer")
        }
        let level = environment["LOG_LEVEL"] ?? "info"
        guard let logLevel = Logger.Level(rawValue: level) else {
            throw ConfigurationError("LOG_LEVEL is not a log level: \(level)")
        }
        self.logLevel = logLevel
    }

    private static func number(
        _ name: String, in environment: [String: String], default value: Int, range: ClosedRange<Int>
    ) throws(ConfigurationError) -> Int {
        guard let text = environment[name] else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw ConfigurationError("\(name) is not a number in \(range.lowerBound)...\(range.upperBound): \(text)")
        }
        return number
    }
}

/// A setting that is missing or unusable.
struct ConfigurationError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
