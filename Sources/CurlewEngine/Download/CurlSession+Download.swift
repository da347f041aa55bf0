// Curlew — a download: the response body streamed to a file beside its destination, resumed when asked.

import HTTPTypes

extension CurlSession {
    /// Downloads the response body of `request` to a file, and returns where it is.
    ///
    /// The destination is chosen when the final head arrives (after redirects); the body is written to a
    /// temporary file in the destination's directory and moved into place only when complete. When the
    /// download fails or is cancelled, the temporary file is removed — unless
    /// ``DownloadOptions/keepsPartialFile`` is set and the body can be resumed, when it is kept and the
    /// thrown error's ``TransportError/resumeData`` says how to continue (give it back in
    /// ``DownloadOptions/resumeData``).
    ///
    /// A resumed download sends `Range` with `If-Range` (the partial's strong `ETag` or `Last-Modified`)
    /// and `Accept-Encoding: identity`: a 206 continues the file, a 200 (the representation changed)
    /// starts it again from the first byte, and a 416 for a partial file already complete finishes it.
    ///
    /// File writes happen on the calling task, never on the session's event loop: the loop hands the
    /// body over through the same bounded buffer as ``perform(_:isolation:handler:)``, so a slow disk slows
    /// this download (the server is read more slowly) and no other transfer.
    ///
    /// No total timeout applies unless the request sets one (``TransportRequest/timeout``, which then runs
    /// until the head arrives), and no body limit; the idle timeout does.
    ///
    /// - Throws: ``TransportError``: transport failures, ``TransportError/Code/fileWriteFailed`` (a full
    ///   disk, a destination that cannot be written), ``TransportError/Code/resumeMismatch``, and
    ///   ``TransportError/Code/cancelled``.
    public func download(
        _ request: TransportRequest, to destination: DownloadDestination, options: DownloadOptions = DownloadOptions()
    ) async throws(TransportError) -> DownloadResponse {
        try await download(request, to: destination, options: options, progress: nil)
    }

    func download(
        _ request: TransportRequest, to destination: DownloadDestination, options: DownloadOptions,
        progress: ProgressReporter?
    ) async throws(TransportError) -> DownloadResponse {
        var request = request
        if let progress { request.options.progressReporter = progress }
        var resume = options.resumeData
        if let partial = resume {
            if partial.url != request.url {
                // Another resource's bytes: its validator proves nothing about this one.
                resume = nil
            } else if !DownloadFile.isIntact(partial) {
                DownloadFile.removeStale(partial)
                resume = nil
            }
        }
        if options.keepsPartialFile || resume != nil, request.headerFields[.acceptEncoding] == nil {
            request.headerFields[.acceptEncoding] = "identity"
        }
        if let resume {
            request.headerFields[.range] = "bytes=\(resume.byteCount)-"
            request.headerFields[.ifRange] = resume.validator.ifRangeValue
        }
        let file = DownloadFile(url: request.url, options: options)
        let method = request.method
        do {
            return try await performFollowingRedirects(request, isolation: nil, sessionTotalTimeout: false) {
                head, body in
                try await Self.receive(
                    head, body, into: file, destination: destination, resume: resume, method: method, progress: progress)
            }
        } catch let error as TransportError {
            // A partial file the server's answer does not continue is of no further use.
            if error.code == .resumeMismatch, let resume { DownloadFile.remove(resume.partialFilePath) }
            throw file.abandon(error)
        } catch {
            throw file.abandon(Self.failure(error, request))
        }
    }

    /// Writes the final response's body to the file and moves it into place.
    private static func receive(
        _ head: ResponseHead, _ body: ResponseBody, into file: DownloadFile, destination: DownloadDestination,
        resume: ResumeData?, method: HTTPRequest.Method, progress: ProgressReporter?
    ) async throws(TransportError) -> DownloadResponse {
        let status = head.status.code
        let path: String
        do {
            path = try await destination.choose(head)
        } catch {
            if error is CancellationError || Task.isCancelled {
                throw TransportError(.cancelled, message: "the task was cancelled while the destination was chosen")
            }
            var failure = TransportError(.fileWriteFailed, message: "the download destination failed: \(error)")
            failure.underlying = error
            throw failure
        }
        var resumedFrom = 0
        if let resume, status == 206 || status == 416 {
            let range = ContentRange(head.headerFields[.contentRange])
            if status == 416 {
                // The partial file is complete when the server says its length is what the file holds.
                guard let range, range.range == nil, range.completeLength == resume.byteCount else {
                    throw TransportError(
                        .resumeMismatch,
                        message: "the server refused the range from byte \(resume.byteCount) (Content-Range: \(head.headerFields[.contentRange] ?? "none"))")
                }
                try file.continue(resume, destination: path)
                let finished = try file.finish()
                return DownloadResponse(head: head, filePath: finished, fileSize: resume.byteCount, resumedFrom: resume.byteCount)
            }
            // The 206 must continue the file up to its end, with the same validator (RFC 9110 §14.4,
            // §15.3.7.3) and no content coding (ranges count encoded bytes).
            guard let range, let sent = range.range, sent.lowerBound == resume.byteCount,
                range.completeLength.map({ sent.upperBound == $0 - 1 }) ?? true
            else {
                throw TransportError(
                    .resumeMismatch,
                    message: "the 206 does not continue the partial file's \(resume.byteCount) bytes to the end (Content-Range: \(head.headerFields[.contentRange] ?? "none"))")
            }
            guard ResumeData.validator(of: head).map({ $0 == resume.validator }) ?? Self.validatorAbsentOrSame(head, resume) else {
                throw TransportError(
                    .resumeMismatch, message: "the 206 comes with another validator or a content coding than the partial file's")
            }
            try file.continue(resume, destination: path)
            resumedFrom = resume.byteCount
        } else {
            try file.create(beside: path)
            // Asked to resume and answered in full: the representation changed, the old partial is stale.
            if let resume, status == 200 { DownloadFile.remove(resume.partialFilePath) }
        }
        if method == .get, status == 200 { file.validator = ResumeData.validator(of: head) }
        var iterator = body.makeAsyncIterator()
        while let chunk = try await iterator.next() {
            try file.write(chunk)
            progress?.addDecoded(chunk.count)
        }
        let size = file.byteCount
        let finished = try file.finish()
        return DownloadResponse(head: head, filePath: finished, fileSize: size, resumedFrom: resumedFrom)
    }

    /// For a 206 that offers no validator of its own: acceptable when it names none that differ (no
    /// `ETag`, no other `Last-Modified`) and has no content coding.
    private static func validatorAbsentOrSame(_ head: ResponseHead, _ resume: ResumeData) -> Bool {
        let fields = head.headerFields
        if let coding = fields[.contentEncoding], coding.lowercased() != "identity" { return false }
        if fields[.eTag] != nil { return false }
        if case .lastModified(let date) = resume.validator, let modified = fields[.lastModified] { return modified == date }
        return true
    }
}
