// Curlew — whether the heavy tests (thousands of sockets) run.

import Foundation

/// Heavy tests (thousands of sockets) are skipped under the thread sanitizer (`make test-tsan` sets
/// `CURLEW_SKIP_HEAVY=1`).
package let heavyTestsDisabled = ProcessInfo.processInfo.environment["CURLEW_SKIP_HEAVY"] == "1"
