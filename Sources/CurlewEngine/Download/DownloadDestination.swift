// Curlew — where a download's file goes, decided when the response head arrives.

/// Where a downloaded file is put: a fixed path, or a path chosen from the response head.
///
/// The choice is made when the final head arrives (after redirects), before any body byte is written:
/// the file is then written to a temporary file beside the destination, in the same directory, so that
/// moving it into place is a rename within one file system, not a copy.
public struct DownloadDestination: Sendable {
    let choose: @Sendable (ResponseHead) async throws -> String

    /// The file at `path`.
    public init(path: String) {
        choose = { _ in path }
    }

    /// The path `choose` returns for the response head (its status, `Content-Disposition`, `Content-Type`
    /// …). What it throws fails the download with ``TransportError/Code/fileWriteFailed`` carrying the
    /// error as ``TransportError/underlying``; nothing is written.
    public init(_ choose: @escaping @Sendable (ResponseHead) async throws -> String) {
        self.choose = choose
    }
}
