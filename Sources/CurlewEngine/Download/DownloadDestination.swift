// Curlew — where a download's file goes, decided when the response head arrives.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Where a downloaded file is put: a fixed path, or a path chosen from the response head.
///
/// The choice is made when the final head arrives (after redirects), before any body byte is written:
/// the file is then written to a temporary file beside the destination, in the same directory, so that
/// moving it into place is a rename within one file system, not a copy.
public struct DownloadDestination: Sendable {
    /// How the file is put in place, chosen with the destination (Alamofire's and Moya's
    /// `DownloadRequest.Options`). They override ``DownloadOptions/createsIntermediateDirectories`` and
    /// ``DownloadOptions/replacesExistingFile`` for this download.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int

        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// Create the destination's missing parent directories.
        public static let createIntermediateDirectories = Options(rawValue: 1 << 0)
        /// Replace a file already at the destination; without it such a file fails the download with
        /// ``TransportError/Code/fileWriteFailed`` and is left as it was.
        public static let removePreviousFile = Options(rawValue: 1 << 1)
    }

    /// Where the file goes, and the options that came with the choice (nil: the download's own).
    struct Choice: Sendable {
        let path: String
        let options: Options?
    }

    let choose: @Sendable (ResponseHead) async throws -> Choice

    /// The file at `path`.
    public init(path: String) {
        choose = { _ in Choice(path: path, options: nil) }
    }

    /// The path `choose` returns for the response head (its status, `Content-Disposition`, `Content-Type`
    /// …). What it throws fails the download with ``TransportError/Code/fileWriteFailed`` carrying the
    /// error as ``TransportError/underlying``; nothing is written.
    public init(_ choose: @escaping @Sendable (ResponseHead) async throws -> String) {
        self.choose = { head in Choice(path: try await choose(head), options: nil) }
    }

    /// The destination `choose` returns, with its options: Moya's `DownloadDestination` closure.
    ///
    /// `choose` is called when the final response head arrives, before any byte is written, with
    /// `temporaryURL` — a file URL in the temporary directory naming a file that does not exist: Curlew
    /// writes the body beside the destination instead, so that putting it in place is a rename, never a
    /// copy — and the response head. What it throws fails the download with
    /// ``TransportError/Code/fileWriteFailed``; nothing is written.
    ///
    /// ```swift
    /// let destination = DownloadDestination { _, response in
    ///     let name = response.suggestedFilename ?? "download"
    ///     return (downloads.appending(path: name), [.createIntermediateDirectories, .removePreviousFile])
    /// }
    /// ```
    ///
    /// A destination that is not a file URL fails the download with ``TransportError/Code/fileWriteFailed``.
    public init(
        _ choose: @escaping @Sendable (_ temporaryURL: URL, _ response: ResponseHead) async throws -> (
            destinationURL: URL, options: Options
        )
    ) {
        self.choose = { head in
            let (url, options) = try await choose(Self.temporaryURL(), head)
            guard url.isFileURL else {
                throw TransportError(.fileWriteFailed, message: "the download destination \(url.absoluteString) is not a file URL")
            }
            return Choice(path: url.path(percentEncoded: false), options: options)
        }
    }

    /// The file named by the response (``ResponseHead/suggestedFilename``, else `download`) in `directory`.
    ///
    /// The server chooses the name: by default a file already there is not replaced (the download fails
    /// with ``TransportError/Code/fileWriteFailed``), as Alamofire's suggested destination does.
    ///
    /// - Parameters:
    ///   - directory: A file URL of the directory.
    ///   - options: How the file is put in place; by default nothing is replaced.
    public static func suggested(in directory: URL, options: Options = []) -> DownloadDestination {
        DownloadDestination { _, response in
            (directory.appending(path: response.suggestedFilename ?? "download", directoryHint: .notDirectory), options)
        }
    }

    /// A name in the temporary directory (`TMPDIR`, else `/tmp`) for the closure's `temporaryURL`.
    private static func temporaryURL() -> URL {
        var directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        let name = "curlew-\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).download"
        return URL(fileURLWithPath: directory == "/" ? "/\(name)" : "\(directory)/\(name)")
    }
}
