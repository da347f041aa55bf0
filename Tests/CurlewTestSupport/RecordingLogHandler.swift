// Curlew — a log handler for tests that keeps every line with its metadata.

import CurlewEngine
import Logging

/// A log handler that keeps every line with its metadata.
package final class RecordingLogHandler: LogHandler, @unchecked Sendable {
    // @unchecked: `lines` is guarded by its lock; the rest is set before the handler is shared.
    package struct Line: Sendable {
        package let level: Logger.Level
        package let message: String
        package let metadata: [String: String]
    }

    private let lines = Locked<[Line]>([])
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .debug

    package init() {}

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        for (key, value) in event.metadata ?? [:] { merged[key] = value }
        let flat = merged.mapValues { "\($0)" }
        lines.withLock { $0.append(Line(level: event.level, message: "\(event.message)", metadata: flat)) }
    }

    package var all: [Line] { lines.withLock { $0 } }
}
