// Curlew — the multipart encoder's exact bytes with a fixed boundary: part headers, escaping of names and
// file names, defaults of file parts, the Content-Type and its boundary, random boundaries, and every form
// that is refused (bad boundaries, a part holding the boundary, bad MIME types, no parts, a method without
// a body, files that are not there). What a real server's parser makes of the bytes is in
// MultipartUploadTests.

import Curlew
import CurlewTestSupport
import Foundation
import HTTPTypes
import Testing

/// Runs `body` with a fresh temporary directory, removed afterwards.
func withMultipartDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-multipart-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return try await ensuring({ try await body(directory) }, cleanUp: { try? FileManager.default.removeItem(atPath: directory) })
}

/// Writes `bytes` to `name` in `directory`; returns the file's URL.
func writeMultipartFile(_ bytes: some Sequence<UInt8>, _ name: String, in directory: String) throws -> URL {
    let url = URL(fileURLWithPath: directory).appendingPathComponent(name)
    try Data(bytes).write(to: url)
    return url
}

/// Whether `boundary` is `curlew-` and 32 lowercase hexadecimal digits.
func isRandomBoundary(_ boundary: String) -> Bool {
    let bytes = Array(boundary.utf8)
    let hex = Array("0123456789abcdef".utf8)
    return bytes.count == 39 && bytes.starts(with: Array("curlew-".utf8)) && bytes.dropFirst(7).allSatisfy { hex.contains($0) }
}

/// The bytes of `form` encoded with `boundary` (a file is read, a stream produced).
private func encodedBytes(_ form: MultipartFormData, boundary: String) async throws -> Data {
    try await form.encoded(boundary: boundary).body.collect(upTo: 1 << 24)
}

/// The error `form.encoded(boundary:)` throws; records an issue when it does not.
private func refusal(
    _ form: MultipartFormData, boundary: String, sourceLocation: SourceLocation = #_sourceLocation
) -> MultipartEncodingError? {
    do {
        let encoded = try form.encoded(boundary: boundary)
        Issue.record("expected the form to be refused, got a body of \(encoded.body)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// An endpoint to a loopback URL nothing is sent to.
private func endpoint(
    _ method: HTTPRequest.Method, _ task: RequestTask, headers: [String: String]? = nil, url: String = "http://127.0.0.1:9/upload"
) -> Endpoint {
    Endpoint(url: url, sampleResponseClosure: { .networkResponse(200, Data()) }, method: method, task: task, httpHeaderFields: headers)
}

/// The error `endpoint.urlRequest()` throws; records an issue when it builds.
private func buildError(_ endpoint: Endpoint, sourceLocation: SourceLocation = #_sourceLocation) -> CurlewError? {
    do {
        let request = try endpoint.urlRequest()
        Issue.record("expected the request to be refused, got \(request.method.rawValue) \(request.url)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// The multipart error inside `error`; records an issue for any other error.
private func multipartError(_ error: CurlewError?, sourceLocation: SourceLocation = #_sourceLocation) -> MultipartEncodingError? {
    guard case .multipartEncoding(let inner)? = error else {
        Issue.record("expected CurlewError.multipartEncoding, got \(String(describing: error))", sourceLocation: sourceLocation)
        return nil
    }
    return inner
}

/// `name="…"; filename="…"` as one data part's whole body with boundary `b`.
private func singlePartBody(disposition: String, contentType: String? = nil, content: String = "v") -> Data {
    var text = "--b\r\nContent-Disposition: form-data; \(disposition)\r\n"
    if let contentType { text += "Content-Type: \(contentType)\r\n" }
    text += "\r\n\(content)\r\n--b--\r\n"
    return Data(text.utf8)
}

/// A stream part writing `chunks`.
private func streamPart(
    _ name: String, _ chunks: [String], replayable: Bool = true, fileName: String? = nil, mimeType: String? = nil
) -> MultipartFormBodyPart {
    let length = chunks.reduce(0) { $0 + $1.utf8.count }
    let stream = FormDataStream(length: length, replayable: replayable) { writer in
        for chunk in chunks { try await writer.write(chunk) }
    }
    return MultipartFormBodyPart(provider: .stream(stream), name: name, fileName: fileName, mimeType: mimeType)
}

/// Names and file names with what the encoder must send for them.
let hostileNames: [(String, String)] = [
    ("plain", "plain"),
    ("quote\"d", "quote%22d"),
    ("\"", "%22"),
    ("carriage\rreturn", "carriage%0Dreturn"),
    ("line\nfeed", "line%0Afeed"),
    ("\r\n\r\n--b--", "%0D%0A%0D%0A--b--"),
    ("semi;colon=1", "semi;colon=1"),
    ("evil\"; name=\"other", "evil%22; name=%22other"),
    ("../../etc/passwd", "../../etc/passwd"),
    ("100%22 already escaped", "100%22 already escaped"),
    ("naïve 名前 🙂", "naïve 名前 🙂"),
    ("e\u{301} decomposed", "e\u{301} decomposed"),
    ("back\\slash", "back\\slash"),
    ("tab\tand\u{1}control", "tab\tand\u{1}control"),
    ("", ""),
]

@Suite struct MultipartEncodingTests {
    // MARK: Exact bytes

    /// In-memory parts: one block of bytes, each part framed as RFC 7578 says; a filename and a
    /// Content-Type line only when given.
    @Test func inMemoryPartsEncodeToExactBytes() throws {
        let form = MultipartFormData(parts: [
            MultipartFormBodyPart(provider: .data(Data("value".utf8)), name: "field"),
            MultipartFormBodyPart(provider: .data(Data("{\"a\":1}".utf8)), name: "json", fileName: "a.json", mimeType: "application/json"),
            MultipartFormBodyPart(provider: .data(Data("plain".utf8)), name: "typed", mimeType: "text/plain"),
            MultipartFormBodyPart(provider: .data(Data("named".utf8)), name: "named", fileName: "n.bin"),
            MultipartFormBodyPart(provider: .data(Data()), name: "empty"),
        ])
        let (body, contentType) = try form.encoded(boundary: "XyZ-boundary")
        let expected = Data(
            ("--XyZ-boundary\r\n" + "Content-Disposition: form-data; name=\"field\"\r\n" + "\r\n" + "value\r\n"
                + "--XyZ-boundary\r\n" + "Content-Disposition: form-data; name=\"json\"; filename=\"a.json\"\r\n"
                + "Content-Type: application/json\r\n" + "\r\n" + "{\"a\":1}\r\n"
                + "--XyZ-boundary\r\n" + "Content-Disposition: form-data; name=\"typed\"\r\n" + "Content-Type: text/plain\r\n"
                + "\r\n" + "plain\r\n"
                + "--XyZ-boundary\r\n" + "Content-Disposition: form-data; name=\"named\"; filename=\"n.bin\"\r\n" + "\r\n"
                + "named\r\n"
                + "--XyZ-boundary\r\n" + "Content-Disposition: form-data; name=\"empty\"\r\n" + "\r\n" + "\r\n"
                + "--XyZ-boundary--\r\n").utf8)
        #expect(body.inMemoryBytes == expected)
        #expect(body.knownLength == expected.count)
        #expect(body.isReplayable)
        #expect(contentType == "multipart/form-data; boundary=XyZ-boundary")
        // The array literal is the same form with a random boundary.
        let literal: MultipartFormData = [MultipartFormBodyPart(provider: .data(Data("value".utf8)), name: "field")]
        #expect(literal.boundary == nil)
        #expect(literal.parts == [MultipartFormBodyPart(provider: .data(Data("value".utf8)), name: "field")])
    }

    /// A file or a stream part makes the body a stream of known length: exactly the bytes of the file and of
    /// the producer between the part headers; replayable unless a stream part is not.
    @Test(arguments: [true, false])
    func fileAndStreamPartsEncodeToExactBytes(replayable: Bool) async throws {
        try await withMultipartDirectory { directory in
            let file = try writeMultipartFile(Array("file bytes\r\nline 2".utf8), "notes.txt", in: directory)
            let form = MultipartFormData(
                parts: [
                    MultipartFormBodyPart(provider: .file(file), name: "doc"),
                    streamPart("s", ["abc", "", "def"], replayable: replayable, fileName: "s.dat", mimeType: "application/octet-stream"),
                    streamPart("plain-stream", ["xyz"]),
                    MultipartFormBodyPart(provider: .data(Data("last".utf8)), name: "tail"),
                ], boundary: "B")
            let (body, contentType) = try form.encoded(boundary: "B")
            let expected = Data(
                ("--B\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"notes.txt\"\r\nContent-Type: text/plain\r\n\r\n"
                    + "file bytes\r\nline 2\r\n"
                    + "--B\r\nContent-Disposition: form-data; name=\"s\"; filename=\"s.dat\"\r\n"
                    + "Content-Type: application/octet-stream\r\n\r\nabcdef\r\n"
                    + "--B\r\nContent-Disposition: form-data; name=\"plain-stream\"\r\n\r\nxyz\r\n"
                    + "--B\r\nContent-Disposition: form-data; name=\"tail\"\r\n\r\nlast\r\n"
                    + "--B--\r\n").utf8)
            #expect(contentType == "multipart/form-data; boundary=B")
            #expect(body.inMemoryBytes == nil)
            #expect(body.filePath == nil)
            #expect(body.knownLength == expected.count)
            #expect(body.isReplayable == replayable)
            #expect(try await body.collect(upTo: 1 << 20) == expected)
            #expect(try await body.collect(upTo: 1 << 20) == expected)
        }
    }

    /// A form of only a file part is a stream too, replayable, of the file's length plus the framing.
    @Test func aFileOnlyFormIsAReplayableStreamOfKnownLength() async throws {
        try await withMultipartDirectory { directory in
            let payload = streamPattern(count: 600_000, from: 11)
            let file = try writeMultipartFile(payload, "blob.bin", in: directory)
            let (body, _) = try MultipartFormData(parts: [MultipartFormBodyPart(provider: .file(file), name: "blob")]).encoded(boundary: "zz")
            var expected = Data(
                ("--zz\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"blob.bin\"\r\n"
                    + "Content-Type: application/octet-stream\r\n\r\n").utf8)
            expected.append(contentsOf: payload)
            expected.append(contentsOf: Array("\r\n--zz--\r\n".utf8))
            #expect(body.isReplayable)
            #expect(body.knownLength == expected.count)
            #expect(try await body.collect(upTo: 1 << 21) == expected)
        }
    }

    // MARK: Names and file names

    /// `"`, CR and LF are percent-escaped in names and file names, as browsers do; everything else, non-ASCII
    /// included, is sent as raw UTF-8 (byte for byte: no Unicode normalisation), and never as `filename*`.
    @Test(arguments: hostileNames)
    func namesAndFileNamesAreEscapedAsBrowsersDo(_ raw: String, _ escaped: String) async throws {
        let form = MultipartFormData(
            parts: [MultipartFormBodyPart(provider: .data(Data("v".utf8)), name: raw, fileName: raw)], boundary: "b")
        let bytes = try #require(try form.encoded(boundary: "b").body.inMemoryBytes)
        #expect(bytes == singlePartBody(disposition: "name=\"\(escaped)\"; filename=\"\(escaped)\""))
        #expect(!String(decoding: bytes, as: UTF8.self).contains("filename*"))
        // A file part's own file name is escaped the same way.
        try await withMultipartDirectory { directory in
            guard !raw.isEmpty, !raw.contains("/"), !raw.utf8.contains(0) else { return }
            let file = try writeMultipartFile(Array("v".utf8), raw, in: directory)
            let filePart = MultipartFormData(parts: [MultipartFormBodyPart(provider: .file(file), name: "f", mimeType: "text/plain")])
            #expect(
                try await encodedBytes(filePart, boundary: "b")
                    == singlePartBody(disposition: "name=\"f\"; filename=\"\(escaped)\"", contentType: "text/plain"))
        }
    }

    // MARK: File parts

    /// A file part without a file name sends the file's last path component (decoded, raw UTF-8, escaped
    /// as names are); without a MIME type, the type of its extension, case-insensitively, else
    /// `application/octet-stream`.
    @Test(arguments: [
        ("photo.PNG", "photo.PNG", "image/png"),
        ("data.json", "data.json", "application/json"),
        ("archive.tar.gz", "archive.tar.gz", "application/gzip"),
        ("page.HTM", "page.HTM", "text/html"),
        ("notes.txt", "notes.txt", "text/plain"),
        ("clip.mp4", "clip.mp4", "video/mp4"),
        ("README", "README", "application/octet-stream"),
        (".profile", ".profile", "application/octet-stream"),
        ("trailing.", "trailing.", "application/octet-stream"),
        ("weird.unknownext", "weird.unknownext", "application/octet-stream"),
        ("my file é.txt", "my file é.txt", "text/plain"),
        ("say \"hi\".txt", "say %22hi%22.txt", "text/plain"),
    ])
    func aFilePartDefaultsToItsFilesNameAndType(onDisk: String, sentName: String, mimeType: String) async throws {
        try await withMultipartDirectory { directory in
            let file = try writeMultipartFile(Array("content".utf8), onDisk, in: directory)
            let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .file(file), name: "f")])
            #expect(
                try await encodedBytes(form, boundary: "b")
                    == singlePartBody(disposition: "name=\"f\"; filename=\"\(sentName)\"", contentType: mimeType, content: "content"))
        }
    }

    /// A file part's given file name and type are sent instead; a given file name alone picks the type of
    /// its own extension; a given type alone keeps the file's name.
    @Test func aFilePartsGivenNameAndTypeAreSent() async throws {
        try await withMultipartDirectory { directory in
            let file = try writeMultipartFile(Array("x".utf8), "upload.bin", in: directory)
            let cases: [(String?, String?, String)] = [
                ("report.pdf", "application/x-custom", "name=\"f\"; filename=\"report.pdf\"\r\nContent-Type: application/x-custom"),
                ("report.pdf", nil, "name=\"f\"; filename=\"report.pdf\"\r\nContent-Type: application/pdf"),
                (nil, "image/png", "name=\"f\"; filename=\"upload.bin\"\r\nContent-Type: image/png"),
                ("", nil, "name=\"f\"; filename=\"\"\r\nContent-Type: application/octet-stream"),
            ]
            for (fileName, mimeType, headers) in cases {
                let part = MultipartFormBodyPart(provider: .file(file), name: "f", fileName: fileName, mimeType: mimeType)
                let expected = Data("--b\r\nContent-Disposition: form-data; \(headers)\r\n\r\nx\r\n--b--\r\n".utf8)
                #expect(
                    try await encodedBytes(MultipartFormData(parts: [part]), boundary: "b") == expected,
                    "fileName \(String(describing: fileName)), mimeType \(String(describing: mimeType))")
            }
        }
    }

    /// A file part must be a file URL.
    @Test func aFilePartThatIsNotAFileURLIsRefused() throws {
        let url = try #require(URL(string: "https://example.com/a.txt"))
        let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .file(url), name: "f")])
        #expect(refusal(form, boundary: "b") == .notAFileURL("https://example.com/a.txt"))
        #expect(multipartError(buildError(endpoint(.post, .uploadMultipart(form)))) == .notAFileURL("https://example.com/a.txt"))
    }

    /// A file that is missing, or not a regular file, is refused when the body is built, naming the file
    /// and the reason once.
    @Test func anUnreadableFileIsRefused() async throws {
        try await withMultipartDirectory { directory in
            let missing = directory + "/missing.bin"
            let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .file(URL(fileURLWithPath: missing)), name: "f")])
            for error in [refusal(form, boundary: "b"), multipartError(buildError(endpoint(.post, .uploadMultipart(form))))] {
                guard case .unreadableFile(let path, _)? = error else {
                    Issue.record("expected unreadableFile, got \(String(describing: error))")
                    continue
                }
                #expect(path == missing)
                #expect(error?.description == "cannot read the file \(missing): No such file or directory")
            }
            let folder = URL(fileURLWithPath: directory)
            let folderPath = folder.path(percentEncoded: false)
            let error = refusal(MultipartFormData(parts: [MultipartFormBodyPart(provider: .file(folder), name: "f")]), boundary: "b")
            guard case .unreadableFile(let path, _)? = error else {
                Issue.record("expected unreadableFile, got \(String(describing: error))")
                return
            }
            #expect(path == folderPath)
            #expect(error?.description == "cannot read the file \(folderPath): not a regular file")
        }
    }

    // MARK: Boundaries

    /// The Content-Type names the boundary bare when it is a token, quoted otherwise; the body uses it bare.
    @Test(arguments: [
        ("simple", "multipart/form-data; boundary=simple"),
        ("a'b+c_d-e.f09", "multipart/form-data; boundary=a'b+c_d-e.f09"),
        ("with space", "multipart/form-data; boundary=\"with space\""),
        ("(paren)", "multipart/form-data; boundary=\"(paren)\""),
        ("a,b", "multipart/form-data; boundary=\"a,b\""),
        ("a/b", "multipart/form-data; boundary=\"a/b\""),
        ("a:b", "multipart/form-data; boundary=\"a:b\""),
        ("a=b", "multipart/form-data; boundary=\"a=b\""),
        ("a?b", "multipart/form-data; boundary=\"a?b\""),
    ])
    func theContentTypeQuotesABoundaryThatIsNotAToken(boundary: String, contentType: String) throws {
        let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .data(Data("v".utf8)), name: "n")])
        let encoded = try form.encoded(boundary: boundary)
        #expect(encoded.contentType == contentType)
        let expected = "--\(boundary)\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\nv\r\n--\(boundary)--\r\n"
        #expect(encoded.body.inMemoryBytes == Data(expected.utf8))
    }

    /// A random boundary is `curlew-` and 32 lowercase hex digits, 128 random bits: no digit is fixed, no
    /// two draws are equal, and it is a valid boundary.
    @Test func randomBoundariesAre128RandomBits() throws {
        for wrong in ["curlew-" + String(repeating: "A", count: 32), "curlew-" + String(repeating: "0", count: 31), "curlew_" + String(repeating: "0", count: 32)] {
            #expect(!isRandomBoundary(wrong))
        }
        let draws = (0..<256).map { _ in MultipartFormData.randomBoundary() }
        #expect(Set(draws).count == draws.count)
        for boundary in draws {
            #expect(isRandomBoundary(boundary), "\(boundary)")
            #expect(boundary.utf8.count == 39)
        }
        let digits = draws.map { Array($0.utf8.dropFirst(7)) }
        for position in 0..<32 {
            #expect(Set(digits.map { $0.count > position ? $0[position] : 0 }).count > 1, "hex digit \(position) never changes")
        }
        let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .data(Data("v".utf8)), name: "n")])
        for boundary in draws.prefix(8) {
            #expect(try form.encoded(boundary: boundary).contentType == "multipart/form-data; boundary=\(boundary)")
        }
    }

    /// RFC 2046: 1 to 70 characters of its set, not ending with a space; anything else is refused.
    @Test(arguments: [
        "", String(repeating: "a", count: 71), "ends with space ", "quote\"", "semi;colon", "é", "line\r\nbreak", "star*",
        "at@", "tab\tx", "back\\slash", "brace{", "percent%", "nul\u{0}",
    ])
    func anInvalidBoundaryIsRefused(_ boundary: String) {
        let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .data(Data("v".utf8)), name: "n")], boundary: boundary)
        #expect(refusal(form, boundary: boundary) == .invalidBoundary(boundary))
        #expect(multipartError(buildError(endpoint(.post, .uploadMultipart(form)))) == .invalidBoundary(boundary))
    }

    /// The edges of RFC 2046's set are accepted: 1 and 70 characters, a leading or inner space, every
    /// special character.
    @Test(arguments: ["x", String(repeating: "7", count: 70), " leading", "in ner", "'()+_,-./:=? x", "0123456789ABCXYZabcxyz"])
    func aValidBoundaryIsAccepted(_ boundary: String) throws {
        let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .data(Data("v".utf8)), name: "n")], boundary: boundary)
        let bytes = try #require(try form.encoded(boundary: boundary).body.inMemoryBytes)
        #expect(bytes == Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\nv\r\n--\(boundary)--\r\n".utf8))
        let request = try endpoint(.post, .uploadMultipart(form)).urlRequest()
        #expect(request.body?.inMemoryBytes == bytes)
    }

    /// An in-memory part holding the boundary is refused (naming the part); one holding only a prefix of it,
    /// or the boundary in another case, is not. File parts are not searched (documented).
    @Test func aDataPartHoldingTheBoundaryIsRefused() async throws {
        let boundary = "curlew-fixed-boundary"
        for content in ["x" + boundary + "y", boundary, "\r\n--" + boundary + "--\r\n", "prefix \r\n--" + boundary] {
            let form = MultipartFormData(
                parts: [
                    MultipartFormBodyPart(provider: .data(Data("fine".utf8)), name: "first"),
                    MultipartFormBodyPart(provider: .data(Data(content.utf8)), name: "second"),
                ], boundary: boundary)
            #expect(refusal(form, boundary: boundary) == .boundaryInPart(name: "second"), "\(content.debugDescription)")
            #expect(multipartError(buildError(endpoint(.post, .uploadMultipart(form)))) == .boundaryInPart(name: "second"))
        }
        for content in ["\r\n--curlew-fixed-boundar", "CURLEW-FIXED-BOUNDARY", "curlew-fixed-boundarX"] {
            let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .data(Data(content.utf8)), name: "n")], boundary: boundary)
            #expect(
                try form.encoded(boundary: boundary).body.inMemoryBytes
                    == Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\n\(content)\r\n--\(boundary)--\r\n".utf8))
        }
        try await withMultipartDirectory { directory in
            let file = try writeMultipartFile(Array("a \(boundary) b".utf8), "holds.txt", in: directory)
            let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .file(file), name: "f")])
            #expect(try await encodedBytes(form, boundary: boundary).count > 0)
        }
    }

    // MARK: Refused forms

    /// A MIME type that is empty or holds CR, LF, NUL or another control character is refused, for data,
    /// stream and file parts alike.
    @Test(arguments: ["", "text/plain\r\nX-Injected: 1", "text/plain\n", "text\r", "a\u{0}b", "tab\there", "del\u{7F}"])
    func anInvalidMimeTypeIsRefused(_ mimeType: String) async throws {
        let data = MultipartFormData(parts: [MultipartFormBodyPart(provider: .data(Data("v".utf8)), name: "d", mimeType: mimeType)])
        #expect(refusal(data, boundary: "b") == .invalidMimeType(name: "d", mimeType))
        let stream = MultipartFormData(parts: [streamPart("s", ["v"], mimeType: mimeType)])
        #expect(refusal(stream, boundary: "b") == .invalidMimeType(name: "s", mimeType))
        try await withMultipartDirectory { directory in
            let file = try writeMultipartFile(Array("v".utf8), "v.txt", in: directory)
            let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .file(file), name: "f", mimeType: mimeType)])
            #expect(refusal(form, boundary: "b") == .invalidMimeType(name: "f", mimeType))
            #expect(multipartError(buildError(endpoint(.post, .uploadMultipart(form)))) == .invalidMimeType(name: "f", mimeType))
        }
    }

    /// A form needs a part.
    @Test func aFormWithoutPartsIsRefused() {
        #expect(refusal(MultipartFormData(parts: []), boundary: "b") == .noParts)
        #expect(MultipartFormData(parts: []).isEmpty)
        #expect(MultipartFormData().isEmpty && MultipartFormData() == MultipartFormData(parts: []))
        #expect(multipartError(buildError(endpoint(.post, .uploadMultipart([])))) == .noParts)
        let composite = RequestTask.uploadCompositeMultipart(MultipartFormData(parts: []), urlParameters: ["a": 1])
        #expect(multipartError(buildError(endpoint(.put, composite))) == .noParts)
    }

    /// A stream part cannot declare a negative length.
    @Test func aNegativeStreamLengthIsRefused() {
        let stream = FormDataStream(length: -5) { _ in }
        let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .stream(stream), name: "s")])
        #expect(refusal(form, boundary: "b") == .invalidLength(name: "s", -5))
        #expect(multipartError(buildError(endpoint(.post, .uploadMultipart(form)))) == .invalidLength(name: "s", -5))
        // `Int.max` meant as "unknown" fails typed instead of overflowing the form's length.
        let huge = MultipartFormData(parts: [
            MultipartFormBodyPart(provider: .stream(FormDataStream(length: 10) { _ in }), name: "a"),
            MultipartFormBodyPart(provider: .stream(FormDataStream(length: .max) { _ in }), name: "b"),
        ])
        #expect(refusal(huge, boundary: "b") == .invalidLength(name: "b", .max))
    }

    /// A multipart task on a method that does not carry a form fails before anything is sent.
    @Test(arguments: ["GET", "HEAD", "DELETE", "OPTIONS", "TRACE", "QUERY", "post"])
    func aMultipartTaskOnAMethodWithoutAFormIsRefused(_ name: String) throws {
        let method = try #require(HTTPRequest.Method(name))
        let form: MultipartFormData = [MultipartFormBodyPart(provider: .data(Data("v".utf8)), name: "n")]
        #expect(multipartError(buildError(endpoint(method, .uploadMultipart(form)))) == .methodNotSupported(name))
        #expect(multipartError(buildError(endpoint(method, .uploadCompositeMultipart(form, urlParameters: [:])))) == .methodNotSupported(name))
    }

    /// As Moya decides: POST, PUT, PATCH and CONNECT carry a form; no other method does.
    @Test(arguments: [
        ("POST", true), ("PUT", true), ("PATCH", true), ("CONNECT", true), ("GET", false), ("HEAD", false),
        ("DELETE", false), ("OPTIONS", false), ("TRACE", false), ("QUERY", false), ("PROPFIND", false), ("post", false),
    ])
    func supportsMultipartIsMoyas(_ name: String, _ supports: Bool) throws {
        let method = try #require(HTTPRequest.Method(name))
        #expect(method.supportsMultipart == supports)
    }

    // MARK: The request an endpoint builds

    /// The request's Content-Type names the body's boundary, replacing any the target gives (in either
    /// spelling), once; the target's other fields stay.
    @Test(arguments: ["POST", "PUT", "PATCH", "CONNECT"])
    func theRequestCarriesTheFormAndItsContentType(_ name: String) throws {
        let method = try #require(HTTPRequest.Method(name))
        let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .data(Data("v".utf8)), name: "n")], boundary: "fixed")
        let request = try endpoint(
            method, .uploadMultipart(form), headers: ["Content-Type": "text/plain", "content-type": "application/json", "X-Trace": "7"]
        ).urlRequest()
        #expect(request.method == method)
        #expect(request.headerFields[values: .contentType] == ["multipart/form-data; boundary=fixed"])
        #expect(request.headerFields[try #require(HTTPField.Name("X-Trace"))] == "7")
        #expect(request.body?.inMemoryBytes == Data("--fixed\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\nv\r\n--fixed--\r\n".utf8))
    }

    /// Without a fixed boundary each request draws its own: the Content-Type and the body agree, and two
    /// requests of one endpoint differ only in the boundary.
    @Test func eachRequestDrawsItsOwnRandomBoundary() throws {
        let form: MultipartFormData = [
            MultipartFormBodyPart(provider: .data(Data("one".utf8)), name: "a"),
            MultipartFormBodyPart(provider: .data(Data("two".utf8)), name: "b", fileName: "b.txt"),
        ]
        let built = endpoint(.post, .uploadMultipart(form))
        var boundaries: [String] = []
        var bodies: [String] = []
        for _ in 0..<2 {
            let request = try built.urlRequest()
            let contentType = try #require(request.headerFields[.contentType])
            let prefix = "multipart/form-data; boundary="
            #expect(contentType.hasPrefix(prefix))
            let boundary = String(contentType.dropFirst(prefix.count))
            #expect(isRandomBoundary(boundary))
            let body = String(decoding: try #require(request.body?.inMemoryBytes), as: UTF8.self)
            #expect(
                body
                    == "--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\none\r\n"
                    + "--\(boundary)\r\nContent-Disposition: form-data; name=\"b\"; filename=\"b.txt\"\r\n\r\ntwo\r\n--\(boundary)--\r\n")
            boundaries.append(boundary)
            bodies.append(body.replacingOccurrences(of: boundary, with: "B"))
        }
        #expect(boundaries[0] != boundaries[1])
        #expect(bodies[0] == bodies[1])
    }

    /// uploadCompositeMultipart puts its parameters in the query string (sorted, escaped) and the form in
    /// the body.
    @Test func aCompositeMultipartPutsItsParametersInTheQuery() throws {
        let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .data(Data("v".utf8)), name: "n")], boundary: "q")
        let request = try endpoint(
            .post, .uploadCompositeMultipart(form, urlParameters: ["page": 2, "q": "a b&c", "flag": true]),
            url: "http://127.0.0.1:9/upload"
        ).urlRequest()
        #expect(request.url == "http://127.0.0.1:9/upload?flag=1&page=2&q=a%20b%26c")
        #expect(request.headerFields[.contentType] == "multipart/form-data; boundary=q")
        #expect(request.body?.inMemoryBytes == Data("--q\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\nv\r\n--q--\r\n".utf8))
    }

    /// uploadFile sends the file as it is: a file body of its length, no Content-Type; a URL that is not a
    /// file URL, or a missing file, fails the build.
    @Test func anUploadFileTaskSendsTheFileAsItIs() async throws {
        try await withMultipartDirectory { directory in
            let file = try writeMultipartFile(streamPattern(count: 12_345), "raw.bin", in: directory)
            let request = try endpoint(.put, .uploadFile(file)).urlRequest()
            #expect(request.body?.filePath == file.path)
            #expect(request.body?.knownLength == 12_345)
            #expect(request.headerFields[.contentType] == nil)
            let remote = try #require(URL(string: "https://example.com/raw.bin"))
            guard case .requestMapping(let reason)? = buildError(endpoint(.put, .uploadFile(remote))) else {
                Issue.record("expected requestMapping")
                return
            }
            #expect(reason == "uploadFile needs a file URL, not https://example.com/raw.bin")
            guard case .transport(let error)? = buildError(endpoint(.put, .uploadFile(URL(fileURLWithPath: directory + "/gone.bin")))) else {
                Issue.record("expected a transport error")
                return
            }
            #expect(error.code == .invalidBody)
        }
    }

    /// As Moya: endpoints of multipart tasks compare their forms, ignoring a random boundary but not a fixed
    /// one; a stream part equals only itself.
    @Test func multipartEndpointsCompareTheirForms() {
        func form(_ parts: [MultipartFormBodyPart], boundary: String? = nil) -> Endpoint {
            endpoint(.post, .uploadMultipart(MultipartFormData(parts: parts, boundary: boundary)))
        }
        let field = MultipartFormBodyPart(provider: .data(Data("v".utf8)), name: "n")
        let other = MultipartFormBodyPart(provider: .data(Data("w".utf8)), name: "n")
        let stream = FormDataStream(length: 1) { try await $0.write("x") }
        let twin = FormDataStream(length: 1) { try await $0.write("x") }
        let streamed = MultipartFormBodyPart(provider: .stream(stream), name: "s")
        #expect(form([field]) == form([field]))
        #expect(form([field]).hashValue == form([field]).hashValue)
        #expect(form([field]) != form([field], boundary: "x"))
        #expect(form([field], boundary: "x") == form([field], boundary: "x"))
        #expect(form([field], boundary: "x") != form([field], boundary: "y"))
        #expect(form([field]) != form([other]))
        #expect(form([streamed]) == form([streamed]))
        #expect(form([streamed]) != form([MultipartFormBodyPart(provider: .stream(twin), name: "s")]))
        #expect(stream == stream)
        #expect(stream != twin)
    }
}
