// Curlew — whether a thread of this process still exists.

import Foundation

/// Whether the thread with this kernel id still exists in this process.
package func threadIsAlive(_ id: Int32) -> Bool {
    id > 0 && FileManager.default.fileExists(atPath: "/proc/self/task/\(id)")
}
