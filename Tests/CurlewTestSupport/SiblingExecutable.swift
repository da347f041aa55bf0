// Curlew — the helper executables (DownloadProbe, SharedSessionProbe) that SwiftPM builds beside the test binary.

import Foundation

/// The path of the executable `name` that SwiftPM built beside this test binary, or nil when it was not built.
package func siblingExecutable(_ name: String) -> String? {
    let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    let candidates = [
        binary.deletingLastPathComponent().appendingPathComponent(name).path,
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path,
    ]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}
