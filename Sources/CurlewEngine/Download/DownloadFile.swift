// Curlew — a download's file on disk: written beside its destination, moved into place when complete,
// kept for resuming or removed when not.

#if canImport(Glibc)
import Glibc
#endif

/// The file one download writes. Used by the downloading task only (not `Sendable`); file writes never
/// happen on the event loop, whose thread serves every transfer of the session.
final class DownloadFile {
    private var options: DownloadOptions
    private let url: String
    private var descriptor: Int32 = -1
    /// The file being written (temporary, beside the destination; or the partial file being continued).
    private(set) var temporaryPath: String?
    private(set) var destinationPath: String?
    /// Bytes the file holds (a resumed partial's included).
    private(set) var byteCount = 0
    /// What would let the download resume; nil when it cannot.
    var validator: ResumeData.Validator?

    init(url: String, options: DownloadOptions) {
        self.url = url
        self.options = options
    }

    /// Takes the options chosen with the destination, when there are some.
    func apply(_ choice: DownloadDestination.Options?) {
        guard let choice else { return }
        options.createsIntermediateDirectories = choice.contains(.createIntermediateDirectories)
        options.replacesExistingFile = choice.contains(.removePreviousFile)
    }

    /// Creates a new temporary file beside `destination`.
    func create(beside destination: String) throws(TransportError) {
        let directory = Self.directory(of: destination)
        if options.createsIntermediateDirectories { try Self.makeDirectories(directory) }
        var name = destination.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? "download"
        // A name of up to 255 bytes must leave room for the dot, the random part and the suffix.
        while name.utf8.count > 200 { name.removeLast() }
        let path = "\(directory)/.\(name).\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).download"
        let opened = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard opened >= 0 else {
            throw Self.failure("cannot create a file in \(directory) for \(destination)", errno)
        }
        descriptor = opened
        temporaryPath = path
        destinationPath = destination
        byteCount = 0
    }

    /// Continues the partial file of `resume` after its `byteCount` bytes.
    func `continue`(_ resume: ResumeData, destination: String) throws(TransportError) {
        let opened = open(resume.partialFilePath, O_WRONLY | O_CLOEXEC)
        guard opened >= 0 else { throw Self.failure("cannot open the partial file \(resume.partialFilePath)", errno) }
        descriptor = opened
        temporaryPath = resume.partialFilePath
        destinationPath = destination
        guard ftruncate(opened, off_t(resume.byteCount)) == 0, lseek(opened, off_t(resume.byteCount), SEEK_SET) >= 0 else {
            throw Self.failure("cannot continue the partial file \(resume.partialFilePath)", errno)
        }
        byteCount = resume.byteCount
        validator = resume.validator
    }

    /// Writes a piece of the body.
    func write(_ chunk: ArraySlice<UInt8>) throws(TransportError) {
        let code = chunk.withUnsafeBytes { options.writer.write($0, to: descriptor) }
        guard code == 0 else {
            // Part of the chunk may have been written: the file keeps only what `byteCount` says, so a
            // kept partial file is exactly what its resume data describes.
            _ = ftruncate(descriptor, off_t(byteCount))
            _ = lseek(descriptor, off_t(byteCount), SEEK_SET)
            throw Self.failure("writing \(temporaryPath ?? "the download") failed after \(byteCount) bytes", code)
        }
        byteCount += chunk.count
    }

    /// Syncs (when asked), closes and moves the file into place. Returns its path.
    func finish() throws(TransportError) -> String {
        guard let temporaryPath, let destinationPath else {
            throw TransportError(.fileWriteFailed, message: "the download finished without a file")
        }
        if options.syncsBeforeMove, fsync(descriptor) != 0 {
            throw Self.failure("syncing \(temporaryPath) to the disk failed", errno)
        }
        let closed = close(descriptor)
        descriptor = -1
        // Network file systems report write-back failures at close.
        if closed != 0 { throw Self.failure("writing \(temporaryPath) failed", errno) }
        try move(temporaryPath, to: destinationPath)
        self.temporaryPath = nil
        if options.syncsBeforeMove {
            // The rename itself is durable once the directory is.
            let directory = open(Self.directory(of: destinationPath), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directory >= 0 {
                _ = fsync(directory)
                close(directory)
            }
        }
        return destinationPath
    }

    /// The download failed: the file is kept when it can be resumed and the caller asked for that
    /// (`error` then carries its ``ResumeData``), and removed otherwise.
    func abandon(_ error: TransportError) -> TransportError {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        guard let temporaryPath else { return error }
        self.temporaryPath = nil
        if options.keepsPartialFile, error.code != .resumeMismatch, let validator, byteCount > 0,
            let destinationPath
        {
            var error = error
            error.resumeData = ResumeData(
                url: url, partialFilePath: temporaryPath, destinationPath: destinationPath, byteCount: byteCount,
                validator: validator)
            return error
        }
        unlink(temporaryPath)
        return error
    }

    /// Puts the file at `destination`: a rename (the temporary file is in the same directory), or a copy
    /// when a resumed partial file lies on another file system.
    private func move(_ source: String, to destination: String) throws(TransportError) {
        if !options.replacesExistingFile {
            // link(2) fails when the name exists, atomically.
            if link(source, destination) == 0 {
                unlink(source)
                return
            }
            let code = errno
            if code == EEXIST { throw Self.failure("cannot put the file at \(destination)", code) }
            if code != EXDEV {
                // A file system without hard links (FAT, SMB, some FUSE): check, then rename.
                guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == EMLINK else {
                    throw Self.failure("cannot put the file at \(destination)", code)
                }
                if access(destination, F_OK) == 0 { throw Self.failure("cannot put the file at \(destination)", EEXIST) }
                guard rename(source, destination) == 0 else { throw Self.failure("cannot move the file to \(destination)", errno) }
                return
            }
        } else if rename(source, destination) == 0 {
            return
        } else if errno != EXDEV {
            throw Self.failure("cannot move the file to \(destination)", errno)
        }
        try Self.copy(source, to: destination, replacing: options.replacesExistingFile, sync: options.syncsBeforeMove)
        unlink(source)
    }

    /// Copies across file systems: into a temporary file beside `destination`, then renamed over it.
    private static func copy(_ source: String, to destination: String, replacing: Bool, sync: Bool) throws(TransportError) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw failure("cannot read \(source)", errno) }
        defer { close(input) }
        let staging = "\(directory(of: destination))/.curlew-copy.\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        let output = open(staging, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw failure("cannot create a file beside \(destination)", errno) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let read = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else {
                let code = errno
                close(output)
                unlink(staging)
                throw failure("cannot read \(source)", code)
            }
            if read == 0 { break }
            let code = buffer.withUnsafeBytes { POSIXFileWriter().write(UnsafeRawBufferPointer(rebasing: $0[0..<read]), to: output) }
            guard code == 0 else {
                close(output)
                unlink(staging)
                throw failure("cannot write beside \(destination)", code)
            }
        }
        if sync, fsync(output) != 0 {
            let code = errno
            close(output)
            unlink(staging)
            throw failure("syncing the copy of \(source) failed", code)
        }
        guard close(output) == 0 else {
            let code = errno
            unlink(staging)
            throw failure("writing the copy of \(source) failed", code)
        }
        // Not replacing: link(2) refuses an existing name atomically.
        let placed = replacing ? rename(staging, destination) : link(staging, destination)
        let code = errno
        if !replacing || placed != 0 { unlink(staging) }
        guard placed == 0 else { throw failure("cannot move the file to \(destination)", code) }
    }

    /// Whether a kept partial file is still what its resume data describes.
    static func isIntact(_ resume: ResumeData) -> Bool {
        var info = stat()
        return stat(resume.partialFilePath, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
            && Int(info.st_size) == resume.byteCount && resume.byteCount > 0
    }

    /// Removes a kept partial file that no longer matches its resume data (nothing else could use it).
    /// Only files named as Curlew names its temporary files (`.<name>.<random>.download`) are removed:
    /// resume data can be decoded from anywhere.
    static func removeStale(_ resume: ResumeData) {
        let name = resume.partialFilePath.split(separator: "/").last ?? ""
        guard name.hasPrefix("."), name.hasSuffix(".download") else { return }
        var info = stat()
        if stat(resume.partialFilePath, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { unlink(resume.partialFilePath) }
    }

    /// Removes a file that is no longer needed.
    static func remove(_ path: String) {
        unlink(path)
    }

    /// The directory part of a path ("." for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `mkdir -p`.
    private static func makeDirectories(_ path: String) throws(TransportError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0, errno != EEXIST {
                throw failure("cannot create the directory \(current)", errno)
            }
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw failure("cannot create the directory \(path)", ENOTDIR)
        }
    }

    static func failure(_ what: String, _ code: Int32) -> TransportError {
        TransportError(.fileWriteFailed, message: "\(what): \(String(cString: strerror(code)))")
    }
}
