// Curlew — how a test changes a file that is being (or about to be) uploaded.

import Foundation
import Testing

/// How a file body changes while (or before) it is sent: shrunk, grown by 1,000 bytes, or removed.
package enum FileChange: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case shrink, grow, remove

    package var testDescription: String { rawValue }

    /// Applies the change to the file at `path`; `shrink` truncates it to `shrunkSize` bytes.
    package func apply(to path: String, shrunkSize: Int) throws {
        switch self {
        case .shrink:
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: UInt64(shrunkSize))
            try handle.close()
        case .grow:
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(count: 1000))
            try handle.close()
        case .remove:
            try FileManager.default.removeItem(atPath: path)
        }
    }
}
