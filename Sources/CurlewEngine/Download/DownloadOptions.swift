// Curlew — how a download treats its file: resuming, keeping what it got, syncing, replacing.

#if canImport(Glibc)
import Glibc
#endif

/// How a download handles its file.
public struct DownloadOptions: Sendable {
    /// Resume from a partial file a failed or cancelled download kept (its error's
    /// ``TransportError/resumeData``). When the partial file is gone or its size changed, the download
    /// starts from the first byte.
    public var resumeData: ResumeData?
    /// Keep the partial file when the download fails or is cancelled, if it can be resumed, and describe
    /// it in the thrown error's ``TransportError/resumeData``. Such a download asks for the body without a
    /// `Content-Encoding` (`Accept-Encoding: identity`), since ranges count encoded bytes.
    public var keepsPartialFile: Bool
    /// Flush the file to the disk (`fsync`) before it is moved into place, and the directory after:
    /// a file in place is then complete even after a power loss. Off by default, as in other HTTP clients
    /// and `curl -o`; it costs the time the disk takes to write the whole file.
    public var syncsBeforeMove: Bool
    /// Create the destination's missing parent directories.
    public var createsIntermediateDirectories: Bool
    /// Replace a file already at the destination (atomically: readers see the old file or the new one).
    /// When false, an existing file fails the download with ``TransportError/Code/fileWriteFailed``.
    public var replacesExistingFile: Bool
    /// Writes the body to the file; tests inject one that fails.
    package var writer: any DownloadFileWriter = POSIXFileWriter()

    /// Options; by default a download starts from the first byte, removes what it wrote when it fails,
    /// does not `fsync`, and replaces an existing file.
    public init(
        resumeData: ResumeData? = nil, keepsPartialFile: Bool = false, syncsBeforeMove: Bool = false,
        createsIntermediateDirectories: Bool = false, replacesExistingFile: Bool = true
    ) {
        self.resumeData = resumeData
        self.keepsPartialFile = keepsPartialFile
        self.syncsBeforeMove = syncsBeforeMove
        self.createsIntermediateDirectories = createsIntermediateDirectories
        self.replacesExistingFile = replacesExistingFile
    }
}

/// Writes a download's bytes to its file.
package protocol DownloadFileWriter: Sendable {
    /// Writes all of `bytes` at the descriptor's offset. Returns 0, or the `errno` of the failure.
    func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32
}

/// `write(2)` until every byte is written.
package struct POSIXFileWriter: DownloadFileWriter {
    package init() {}

    package func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        guard var next = bytes.baseAddress else { return 0 }
        var left = bytes.count
        while left > 0 {
            let written = Glibc.write(descriptor, next, left)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            // A write of nothing with room asked for is a full device.
            if written == 0 { return ENOSPC }
            next += written
            left -= written
        }
        return 0
    }
}
