// Curlew — a multipart form turned into the bytes on the wire: part headers, the parts' bytes, boundaries.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Encodes one form with one boundary (RFC 7578, RFC 2046): each part is `--boundary`, its headers, a
/// blank line and its bytes; the body ends with `--boundary--`. Lines end with CRLF.
struct MultipartEncoder {
    /// A piece of the body: bytes in memory, a file's bytes, or a stream part's.
    private enum Segment {
        case bytes(Data)
        case file(TransportRequest.Body)
        case stream(FormDataStream, name: String)
    }

    let form: MultipartFormData
    let boundary: String

    func encode() throws(MultipartEncodingError) -> (body: TransportRequest.Body, contentType: String) {
        guard !form.parts.isEmpty else { throw .noParts }
        guard Self.isValidBoundary(boundary) else { throw .invalidBoundary(boundary) }
        let delimiter = Data("--\(boundary)".utf8)
        var segments: [Segment] = []
        var pending = Data()
        // The stream parts' declared lengths so far: a length of `Int.max` meant as "unknown" must fail
        // typed, not overflow the form's length.
        var streamed = 0
        for (index, part) in form.parts.enumerated() {
            if index > 0 { pending.append(contentsOf: [0x0D, 0x0A]) }
            pending.append(delimiter)
            pending.append(contentsOf: [0x0D, 0x0A])
            switch part.provider {
            case .data(let data):
                if Self.contains(data, delimiter.dropFirst(2)) { throw .boundaryInPart(name: part.name) }
                pending.append(try Self.headers(part, fileName: part.fileName, mimeType: part.mimeType))
                if data.count >= Self.copyLimit {
                    // A large part is sent from its own storage, not copied into the form.
                    segments.append(.bytes(pending))
                    segments.append(.bytes(data))
                    pending = Data()
                } else {
                    pending.append(data)
                }
            case .file(let url):
                guard url.isFileURL else { throw .notAFileURL(url.absoluteString) }
                let path = url.path(percentEncoded: false)
                guard let file = try? TransportRequest.Body.file(path) else {
                    throw .unreadableFile(path: path, reason: Self.whyUnreadable(path))
                }
                let fileName = part.fileName ?? url.lastPathComponent
                let mimeType = part.mimeType ?? MIMEType.forFileName(fileName)
                pending.append(try Self.headers(part, fileName: fileName, mimeType: mimeType))
                segments.append(.bytes(pending))
                pending = Data()
                segments.append(.file(file))
            case .stream(let stream):
                let (sum, overflow) = streamed.addingReportingOverflow(stream.length)
                // Half the range leaves room for the files and bytes around them.
                guard stream.length >= 0, !overflow, sum <= Int.max / 2 else {
                    throw .invalidLength(name: part.name, stream.length)
                }
                streamed = sum
                pending.append(try Self.headers(part, fileName: part.fileName, mimeType: part.mimeType))
                segments.append(.bytes(pending))
                pending = Data()
                segments.append(.stream(stream, name: part.name))
            }
        }
        pending.append(contentsOf: [0x0D, 0x0A])
        pending.append(delimiter)
        pending.append(Data("--\r\n".utf8))
        segments.append(.bytes(pending))
        return (Self.body(segments), Self.contentType(boundary))
    }

    /// The `Content-Type` value: the boundary quoted when it holds characters a token cannot.
    private static func contentType(_ boundary: String) -> String {
        let needsQuotes = boundary.utf8.contains { byte in
            !(isAlphanumeric(byte) || byte == UInt8(ascii: "'") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "."))
        }
        return needsQuotes ? "multipart/form-data; boundary=\"\(boundary)\"" : "multipart/form-data; boundary=\(boundary)"
    }

    /// Parts in memory at least this large are not copied into the form's bytes.
    static let copyLimit = 64 * 1024

    /// The body: one block of bytes when every segment is in memory and small; bytes and files read in
    /// place when there is no stream part; else a stream of known length.
    private static func body(_ segments: [Segment]) -> TransportRequest.Body {
        if segments.count == 1, case .bytes(let data) = segments[0] { return .data(data) }
        var pieces: [TransportRequest.Body] = []
        for segment in segments {
            switch segment {
            case .bytes(let data): pieces.append(.data(data))
            case .file(let file):
                pieces.append(file)
            case .stream: break
            }
        }
        // Without stream parts, the engine reads the files straight into libcurl's buffer, as it reads a
        // file body: no copy through the calling task.
        if pieces.count == segments.count, let body = TransportRequest.Body.concatenating(pieces) { return body }
        var length = 0
        var replayable = true
        for segment in segments {
            switch segment {
            case .bytes(let data): length += data.count
            case .file(let file): length += file.knownLength ?? 0
            case .stream(let stream, _):
                length += stream.length  // the sum was checked not to overflow when the form was encoded
                replayable = replayable && stream.isReplayable
            }
        }
        return .stream(length: length, replayable: replayable) { writer in
            for segment in segments {
                switch segment {
                case .bytes(let data): try await writer.write(data)
                case .file(let file):
                    // Read on the producing task, with the checks the engine's read of a file body makes.
                    try await file.readFileInChunks { chunk throws(TransportError) in try await writer.write(chunk) }
                case .stream(let stream, let name): try await writeStream(stream, name: name, to: writer)
                }
            }
        }
    }

    /// Runs a stream part's producer, holding it to its declared length.
    private static func writeStream(_ stream: FormDataStream, name: String, to writer: RequestBodyWriter) async throws {
        let written = Locked(0)
        let length = stream.length
        try await stream.produce(
            RequestBodyWriter { chunk throws(TransportError) in
                let total = written.withLock { count in
                    count += chunk.count
                    return count
                }
                guard total <= length else {
                    throw TransportError(
                        .bodyLengthMismatch, message: "the stream part \"\(name)\" wrote more than its \(length) bytes")
                }
                try await writer.write(chunk)
            })
        let total = written.withLock { $0 }
        guard total == length else {
            throw TransportError(.bodyLengthMismatch, message: "the stream part \"\(name)\" wrote \(total) of its \(length) bytes")
        }
    }

    /// A part's header lines and the blank line after them.
    private static func headers(_ part: MultipartFormBodyPart, fileName: String?, mimeType: String?) throws(MultipartEncodingError) -> Data {
        var text = "Content-Disposition: form-data; name=\"\(escape(part.name))\""
        if let fileName { text += "; filename=\"\(escape(fileName))\"" }
        text += "\r\n"
        if let mimeType {
            // Spaces alone are empty too: a reader drops the whitespace around a field value (RFC 9110 §5.5).
            guard mimeType.utf8.contains(where: { $0 != UInt8(ascii: " ") }),
                !mimeType.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else {
                throw .invalidMimeType(name: part.name, mimeType)
            }
            text += "Content-Type: \(mimeType)\r\n"
        }
        text += "\r\n"
        return Data(text.utf8)
    }

    /// A name or file name as browsers send it (WHATWG HTML, RFC 7578 §4.2): `"`, CR and LF
    /// percent-escaped, everything else, non-ASCII included, as raw UTF-8.
    static func escape(_ name: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(name.utf8.count)
        for scalar in name.unicodeScalars {
            switch scalar {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Why `path` cannot be a file part: the system's reason, or what is wrong with what is there.
    private static func whyUnreadable(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return String(cString: strerror(errno)) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return "not a regular file" }
        guard access(path, R_OK) == 0 else { return String(cString: strerror(errno)) }
        return "it cannot be read"
    }

    /// RFC 2046: 1 to 70 of `DIGIT / ALPHA / "'" / "(" / ")" / "+" / "_" / "," / "-" / "." / "/" / ":" /
    /// "=" / "?" / " "`, not ending with a space.
    static func isValidBoundary(_ boundary: String) -> Bool {
        let bytes = Array(boundary.utf8)
        guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy { byte in
            isAlphanumeric(byte) || "'()+_,-./:=? ".utf8.contains(byte)
        }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    /// Whether `data` holds `needle`.
    private static func contains(_ data: Data, _ needle: Data) -> Bool {
        guard !needle.isEmpty, data.count >= needle.count else { return false }
        return data.withUnsafeBytes { haystack in
            needle.withUnsafeBytes { needle in
                guard let start = haystack.baseAddress, let pattern = needle.baseAddress else { return false }
                let first = Int32(needle[0])
                var position = 0
                let last = haystack.count - needle.count
                // memchr finds each candidate first byte at memory speed; memcmp checks the rest.
                while position <= last,
                    let found = memchr(start + position, first, last - position + 1)
                {
                    let offset = start.distance(to: UnsafeRawPointer(found))
                    if memcmp(found, pattern, needle.count) == 0 { return true }
                    position = offset + 1
                }
                return false
            }
        }
    }
}
