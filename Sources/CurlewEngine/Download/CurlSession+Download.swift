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
        let receiver = DownloadReceiver(request, destination: destination, options: options)
        do {
            return try await performFollowingRedirects(receiver.request, isolation: nil, sessionTotalTimeout: false) {
                head, body in
                try await receiver.receive(head, body)
            }
        } catch let error as TransportError {
            throw error
        } catch {
            throw Self.failure(error, request)
        }
    }
}

/// One download's handling of the response: the request it sends (asking for the rest of a partial file
/// when resuming) and the writing of the final response's body to its file. Usable in any response
/// handler, so the provider layer downloads through its middleware chain and stubs.
package struct DownloadReceiver: Sendable {
    /// The request to send: the caller's, with `Range`, `If-Range` and `Accept-Encoding: identity` when
    /// resuming or keeping a partial file.
    package let request: TransportRequest
    private let destination: DownloadDestination
    private let options: DownloadOptions
    private let resume: ResumeData?
    /// The partial file an attempt that failed kept, when a middleware may try again: a later attempt
    /// that writes a new file makes it an orphan (``finish(_:)`` removes it), and a later attempt that
    /// fails before writing reports it.
    private let kept = Locked<ResumeData?>(nil)

    package init(_ request: TransportRequest, destination: DownloadDestination, options: DownloadOptions) {
        var request = request
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
        self.request = request
        self.destination = destination
        self.options = options
        self.resume = resume
    }

    /// Writes the final response's body to a new file (or the partial one) and moves it into place.
    /// When that fails the file is removed, or kept and described in the error's
    /// ``TransportError/resumeData`` when it can be resumed and the options ask for it.
    package func receive(_ head: ResponseHead, _ body: ResponseBodyStream) async throws(TransportError) -> DownloadResponse {
        let file = DownloadFile(url: request.url, options: options)
        do {
            return try await CurlSession.receive(
                head, body, into: file, destination: destination, resume: resume, method: request.method,
                progress: request.options.progressReporter)
        } catch {
            // A partial file the server's answer does not continue is of no further use.
            if error.code == .resumeMismatch, let resume { DownloadFile.remove(resume.partialFilePath) }
            let failure = file.abandon(error)
            if let partial = failure.resumeData {
                let previous = kept.withLock { kept in
                    defer { kept = partial }
                    return kept
                }
                if let previous, previous.partialFilePath != partial.partialFilePath { DownloadFile.remove(previous.partialFilePath) }
            }
            throw failure
        }
    }

    /// Removes a partial file an earlier attempt kept: the call succeeded (a later attempt wrote the file
    /// anew) or ended with an error that cannot report it.
    package func discardKept() {
        guard let partial = kept.withLock({ $0 }) else { return }
        if partial.partialFilePath != resume?.partialFilePath { DownloadFile.remove(partial.partialFilePath) }
    }

    /// The call's final transport failure, carrying the resume data of a partial file an earlier attempt
    /// kept when the failure has none of its own (a later attempt failed before its body).
    package func reportingKept(in error: TransportError) -> TransportError {
        guard error.resumeData == nil, let partial = kept.withLock({ $0 }) else { return error }
        guard DownloadFile.isIntact(partial) else {
            discardKept()
            return error
        }
        var error = error
        error.resumeData = partial
        return error
    }
}

extension CurlSession {
    /// Writes the final response's body to the file and moves it into place.
    fileprivate static func receive(
        _ head: ResponseHead, _ body: ResponseBodyStream, into file: DownloadFile, destination: DownloadDestination,
        resume: ResumeData?, method: HTTPRequest.Method, progress: ProgressReporter?
    ) async throws(TransportError) -> DownloadResponse {
        let status = head.status.code
        let path: String
        do {
            let choice = try await destination.choose(head)
            path = choice.path
            file.apply(choice.options)
        } catch let error as TransportError where error.code == .fileWriteFailed {
            throw error
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
