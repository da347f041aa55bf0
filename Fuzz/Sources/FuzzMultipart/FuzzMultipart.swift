// Fuzz target: Curlew's multipart/form-data encoder (`MultipartFormData`, `MultipartFormBodyPart`), through
// `Endpoint.urlRequest()` as a `.uploadMultipart` task builds it: 0 to 8 parts of bytes in memory or in a
// file, with names, file names and MIME types the input chooses (quotes, CR, LF, `%`, `;`, backslashes,
// non-ASCII, empty), bytes holding boundary-like text, and Curlew's random boundary or one the input
// chooses (see FormInput.swift for the layout).
//
// Oracle:
// 1. Refused exactly when it must be, for the reason the input gives, as the typed error
//    (`CurlewError.multipartEncoding`): a method that carries no form, no parts, a boundary that is not 1
//    to 70 of RFC 2046's characters (not ending with a space), a part in memory holding the boundary, an
//    empty MIME type (spaces only are empty) or one with a control character — the first of these, in
//    that order.
// 2. Accepted: one `Content-Type`, `multipart/form-data; boundary=` and the boundary (a token, or quoted;
//    the chosen one, or `curlew-` and 32 hex digits); a replayable body without trailers whose declared
//    length is the number of its bytes; `--boundary` opening it, CRLF `--boundary--` CRLF closing it and the
//    delimiter CRLF `--boundary` nowhere but between parts; multipart-kit's `MultipartParser` reads back
//    exactly the parts, in order: each one's bytes, byte for byte; one `Content-Disposition` of exactly
//    `form-data; name="…"` and, when a file name is sent, `; filename="…"`, both escaped as WHATWG's form
//    encoding says (`"`, CR, LF as `%22`, `%0D`, `%0A`, everything else as UTF-8; a file part's default name
//    the file's); a `Content-Type` exactly when a MIME type is given (or a file part's default), with it.
//
// With FUZZ_MULTIPART_DUMP=<dir>, each input run writes its body and Content-Type (`<hash>.body`) and what
// the parts must be (`<hash>.json`) there, for Fuzz/Scripts/multipart_compare.py.

import Foundation
import FuzzSupport
import Glibc
import MultipartKit

@testable import Curlew
@testable import CurlewEngine

/// The entry point SwiftPM links as `main` (see `runFuzzer`).
@_cdecl("FuzzMultipart_main")
public func fuzzMultipartMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzMultipart)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultipart(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    var form = FormInput(input)
    let files = PartFiles(form)
    defer { files.remove() }
    let parts = form.parts.enumerated().map { index, part in
        MultipartFormBodyPart(
            provider: part.fileOnDisk == nil ? .data(Data(part.data)) : .file(files.url(index)),
            name: part.name, fileName: part.fileName, mimeType: part.mimeType)
    }
    // What a file part sends by default: the file's name, and the type for it.
    for index in form.parts.indices where form.parts[index].fileOnDisk != nil {
        form.parts[index].fileName = form.parts[index].fileName ?? form.parts[index].fileOnDisk
        if form.parts[index].mimeType == nil {
            let type = MIMEType.forFileName(form.parts[index].fileName ?? "")
            expect(!type.isEmpty && !type.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "default type \(type.debugDescription)")
            form.parts[index].mimeType = type
        }
    }
    let endpoint = Endpoint(
        url: "http://127.0.0.1:9/upload", sampleResponseClosure: { .networkResponse(200, Data()) }, method: form.method,
        task: .uploadMultipart(MultipartFormData(parts: parts, boundary: form.boundary)), httpHeaderFields: nil)
    let expected = expectedRefusal(form)
    let request: TransportRequest
    do {
        request = try endpoint.urlRequest()
    } catch {
        guard case .multipartEncoding(let refusal) = error else { expectationFailed("not a multipart error: \(error)") }
        guard let expected else { expectationFailed("refused without a reason: \(refusal)") }
        expect(same(refusal, expected), "refused for \(refusal), expected \(expected)")
        Dump.refusal(input, refusal)
        return 0
    }
    let (boundary, contentType) = checkContentType(request, chosen: form.boundary)
    let body = checkedBytes(request.body)
    // A file's bytes cannot be checked before they are sent (Curlew reads them as the request goes out):
    // with a boundary of the caller's, that they do not hold it is the caller's promise, as
    // `MultipartFormData` documents. A form whose file breaks it has no parts to read back.
    let keptApart = form.parts.allSatisfy { part in
        part.fileOnDisk == nil || positions(of: Array(boundary.utf8), in: part.data, upTo: 1).isEmpty
    }
    if keptApart {
        checkFraming(body, boundary: boundary, parts: form.parts.count)
        checkParts(body, boundary: boundary, form: form)
    }
    if let expected { expectationFailed("accepted, expected a refusal: \(expected)") }
    Dump.accepted(input, body: body, contentType: contentType, boundary: boundary, form: form, keptApart: keptApart)
    return 0
}

// MARK: Refusals

/// The refusal the form must get, if any: the first rule it breaks, in the order Curlew checks them.
private func expectedRefusal(_ form: FormInput) -> MultipartEncodingError? {
    guard [HTTPRequest.Method.post, .put, .patch, .connect].contains(form.method) else { return .methodNotSupported(form.method.rawValue) }
    guard !form.parts.isEmpty else { return .noParts }
    if let boundary = form.boundary, !isRFC2046Boundary(boundary) { return .invalidBoundary(boundary) }
    for part in form.parts {
        // Only bytes in memory can be checked; a chosen boundary is the caller's promise for a file.
        if part.fileOnDisk == nil, let boundary = form.boundary, !positions(of: Array(boundary.utf8), in: part.data, upTo: 1).isEmpty {
            return .boundaryInPart(name: part.name)
        }
        // A type of spaces only is empty once a reader drops them (found by this target: it was sent).
        if let type = part.mimeType,
            type.utf8.allSatisfy({ $0 == 0x20 }) || type.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        {
            return .invalidMimeType(name: part.name, type)
        }
    }
    return nil
}

/// RFC 2046 §5.1.1: `boundary := 0*69<bchars> bcharsnospace`.
private func isRFC2046Boundary(_ boundary: String) -> Bool {
    let bcharsnospace = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=?".utf8)
    let bytes = Array(boundary.utf8)
    guard let last = bytes.last, bytes.count <= 70, bcharsnospace.contains(last) else { return false }
    return bytes.allSatisfy { bcharsnospace.contains($0) || $0 == UInt8(ascii: " ") }
}

/// Whether two refusals are the same, their strings compared byte for byte (a `String`'s `==` takes
/// canonically equivalent names as equal).
private func same(_ lhs: MultipartEncodingError, _ rhs: MultipartEncodingError) -> Bool {
    func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }
    switch (lhs, rhs) {
    case (.noParts, .noParts): return true
    case (.methodNotSupported(let a), .methodNotSupported(let b)), (.invalidBoundary(let a), .invalidBoundary(let b)),
        (.boundaryInPart(let a), .boundaryInPart(let b)):
        return bytes(a) == bytes(b)
    case (.invalidMimeType(let a, let x), .invalidMimeType(let b, let y)): return bytes(a) == bytes(b) && bytes(x) == bytes(y)
    default: return false
    }
}

// MARK: Content-Type and body

/// Checks the one `Content-Type`; returns the boundary it names and the value.
private func checkContentType(_ request: TransportRequest, chosen: String?) -> (boundary: String, value: String) {
    let values = request.headerFields[values: .contentType]
    expect(values.count == 1, "Content-Type fields: \(values)")
    let value = values[0]
    let prefix = "multipart/form-data; boundary="
    expect(value.utf8.starts(with: prefix.utf8), "Content-Type \(value.debugDescription)")
    var parameter = Array(value.utf8.dropFirst(prefix.utf8.count))
    if parameter.first == UInt8(ascii: "\"") {
        // A quoted-string; a boundary holds no `"` or `\`, so nothing inside is escaped.
        expect(parameter.count >= 2 && parameter.last == UInt8(ascii: "\""), "unterminated quotes: \(value.debugDescription)")
        parameter = Array(parameter.dropFirst().dropLast())
        expect(!parameter.contains(UInt8(ascii: "\"")) && !parameter.contains(UInt8(ascii: "\\")), "quoted: \(value.debugDescription)")
    } else {
        // RFC 2045 §5.1: a token is any ASCII character but SPACE, controls and tspecials.
        let tspecials = Set("()<>@,;:\\\"/[]?=".utf8)
        expect(
            !parameter.isEmpty && parameter.allSatisfy { $0 > 0x20 && $0 < 0x7F && !tspecials.contains($0) },
            "boundary not a token, unquoted: \(value.debugDescription)")
    }
    let boundary = String(decoding: parameter, as: UTF8.self)
    if let chosen {
        expect(Array(chosen.utf8) == parameter, "boundary \(boundary.debugDescription), chosen \(chosen.debugDescription)")
    } else {
        let hex = Set("0123456789abcdef".utf8)
        expect(
            parameter.count == 39 && parameter.starts(with: "curlew-".utf8) && parameter.dropFirst(7).allSatisfy { hex.contains($0) },
            "default boundary \(boundary.debugDescription)")
    }
    return (boundary, value)
}

/// The bytes of the body, checked: replayable, no trailers, of its declared length. Read as the engine
/// would: bytes in memory, files read in place.
private func checkedBytes(_ body: TransportRequest.Body?) -> [UInt8] {
    guard let body else { expectationFailed("an accepted form without a body") }
    expect(body.isReplayable && !body.hasTrailers, "replayable \(body.isReplayable), trailers \(body.hasTrailers)")
    var bytes: [UInt8] = []
    func read(_ region: FileRegion) {
        guard let file = FileManager.default.contents(atPath: region.path) else { expectationFailed("unreadable \(region.path)") }
        expect(region.wholeFile && region.offset == 0 && region.length == file.count, "file region \(region), file of \(file.count)")
        bytes += file
    }
    switch body.storage {
    case .bytes(let data): bytes = Array(data)
    case .file(let region): read(region)
    case .segments(let segments):
        for segment in segments {
            switch segment {
            case .bytes(let data): bytes += data
            case .file(let region): read(region)
            }
        }
    case .stream: expectationFailed("a form without stream parts became a stream")
    }
    expect(body.knownLength == bytes.count, "declared \(String(describing: body.knownLength)), \(bytes.count) bytes")
    return bytes
}

/// Checks the delimiters: `--boundary` CRLF first, CRLF `--boundary--` CRLF last, and the delimiter
/// CRLF `--boundary` exactly once between two parts (so any reader finds the same parts).
private func checkFraming(_ body: [UInt8], boundary: String, parts: Int) {
    let dash = Array("--\(boundary)".utf8)
    let delimiter = [0x0D, 0x0A] + dash
    expect(body.starts(with: dash + [0x0D, 0x0A]), "body does not open with --boundary CRLF")
    let close = delimiter + Array("--\r\n".utf8)
    expect(body.count >= dash.count + close.count && body.suffix(close.count).elementsEqual(close), "body does not close with the delimiter")
    let found = positions(of: delimiter, in: body).count
    expect(found == parts, "\(found) delimiters after the first for \(parts) parts")
}

// MARK: Parts

/// The parts multipart-kit's parser reads.
private struct ParsedPart {
    var headers: [(name: String, value: [UInt8])] = []
    var body: [UInt8] = []
}

private func parse(_ body: [UInt8], boundary: String) -> [ParsedPart] {
    let parser = MultipartParser(boundary: boundary)
    var parts: [ParsedPart] = []
    var current = ParsedPart()
    parser.onHeader = { name, value in current.headers.append((name, Array(value.utf8))) }
    parser.onBody = { buffer in current.body += buffer.readableBytesView }
    parser.onPartComplete = {
        parts.append(current)
        current = ParsedPart()
    }
    do {
        try parser.execute(body)
    } catch {
        expectationFailed("multipart-kit cannot parse the body: \(error)")
    }
    expect(current.headers.isEmpty && current.body.isEmpty, "an unfinished part after the last")
    return parts
}

/// The parts as a plain reading of the delimiters finds them (after `checkFraming`): between each
/// delimiter and its CRLF and the next delimiter, header lines up to a blank line, then the bytes.
/// For large bodies: multipart-kit reads a byte at a time, instrumented, some 30 ms for 64 KiB.
private func split(_ body: [UInt8], boundary: String, parts count: Int) -> [ParsedPart] {
    let delimiter = Array("\r\n--\(boundary)".utf8)
    let ends = positions(of: delimiter, in: body)
    var start = delimiter.count  // `--boundary` CRLF, checked
    var parts: [ParsedPart] = []
    for end in ends.prefix(count) {
        let content = Array(body[start..<end])
        guard let blank = positions(of: Array("\r\n\r\n".utf8), in: content, upTo: 1).first else {
            expectationFailed("part \(parts.count): no blank line after the headers")
        }
        var part = ParsedPart(body: Array(content[(blank + 4)...]))
        if blank > 0 {
            for line in content[..<blank].split(separator: 0x0A, omittingEmptySubsequences: false) {
                let line = line.last == 0x0D ? line.dropLast() : line
                guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { expectationFailed("header line \(text(Array(line)))") }
                part.headers.append((String(decoding: line[..<colon], as: UTF8.self), Array(line[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 })))
            }
        }
        parts.append(part)
        start = end + delimiter.count + 2
        let after = parts.count == count ? "--" : "\r\n"
        expect(body[(start - 2)..<start].elementsEqual(after.utf8), "part \(parts.count): delimiter not followed by \(after.debugDescription)")
    }
    return parts
}

private func checkParts(_ body: [UInt8], boundary: String, form: FormInput) {
    let parsed = body.count <= 16 * 1024 ? parse(body, boundary: boundary) : split(body, boundary: boundary, parts: form.parts.count)
    expect(parsed.count == form.parts.count, "\(parsed.count) parts read, \(form.parts.count) sent")
    for (index, (part, read)) in zip(form.parts, parsed).enumerated() {
        expect(read.body == part.data, "part \(index): \(read.body.count) bytes read, \(part.data.count) sent")
        let dispositions = read.headers.filter { $0.name.lowercased() == "content-disposition" }
        let types = read.headers.filter { $0.name.lowercased() == "content-type" }
        expect(dispositions.count == 1 && dispositions.count + types.count == read.headers.count, "part \(index) headers: \(read.headers)")
        guard let (name, fileName) = disposition(dispositions[0].value) else {
            expectationFailed("part \(index): Content-Disposition \(String(decoding: dispositions[0].value, as: UTF8.self).debugDescription)")
        }
        expect(name == wireEscaped(part.name), "part \(index): name \(text(name)) for \(part.name.debugDescription)")
        expect(
            fileName == part.fileName.map(wireEscaped),
            "part \(index): filename \(fileName.map(text) ?? "none") for \(part.fileName?.debugDescription ?? "none")")
        // multipart-kit drops the spaces and tabs a field value starts with, as HTTP does (RFC 9110 §5.5:
        // whitespace around a value is not part of it); the type is compared without them. What is left
        // must not be empty: an empty type is refused.
        let type = part.mimeType.map { Array($0.utf8.drop { $0 == 0x20 || $0 == 0x09 }) }
        expect(types.map(\.value) == (type.map { [$0] } ?? []), "part \(index): Content-Type \(types.map { text($0.value) })")
        expect(types.allSatisfy { !$0.value.isEmpty }, "part \(index): an empty Content-Type read back for \(part.mimeType.debugDescription)")
    }
}

/// `form-data; name="…"` with an optional `; filename="…"`, exactly: the raw name and file name.
/// Escaped as WHATWG says, neither holds a `"`, so each ends at the next one.
private func disposition(_ value: [UInt8]) -> (name: [UInt8], fileName: [UInt8]?)? {
    var rest = value[...]
    func take(_ literal: String) -> Bool {
        guard rest.starts(with: literal.utf8) else { return false }
        rest = rest.dropFirst(literal.utf8.count)
        return true
    }
    func quoted() -> [UInt8]? {
        guard let end = rest.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        defer { rest = rest[(end + 1)...] }
        return Array(rest[..<end])
    }
    guard take("form-data; name=\""), let name = quoted() else { return nil }
    if rest.isEmpty { return (name, nil) }
    guard take("; filename=\""), let fileName = quoted(), rest.isEmpty else { return nil }
    return (name, fileName)
}

/// A name as WHATWG's multipart/form-data encoding sends it (HTML, "multipart/form-data encoding
/// algorithm"): `"` as `%22`, CR as `%0D`, LF as `%0A`, the rest as UTF-8. (Browsers also turn a lone
/// CR or LF into CRLF first; Curlew keeps the name as given, which the escaping makes safe.) A receiver
/// that decodes cannot tell a `%22` the name held from an escaped quote: the escaping is not reversible,
/// so the wire form is what is compared.
func wireEscaped(_ name: String) -> [UInt8] {
    var bytes: [UInt8] = []
    for byte in name.utf8 {
        switch byte {
        case UInt8(ascii: "\""): bytes += Array("%22".utf8)
        case 0x0D: bytes += Array("%0D".utf8)
        case 0x0A: bytes += Array("%0A".utf8)
        default: bytes.append(byte)
        }
    }
    return bytes
}

/// Where `needle` occurs in `haystack` (without overlaps), up to `limit` times.
private func positions(of needle: [UInt8], in haystack: [UInt8], upTo limit: Int = .max) -> [Int] {
    guard !needle.isEmpty else { return [] }
    return haystack.withUnsafeBytes { haystack in
        needle.withUnsafeBytes { needle in
            guard let start = haystack.baseAddress, let pattern = needle.baseAddress else { return [] }
            var found: [Int] = []
            var position = 0
            // (Glibc's module has no `memmem`.) Each candidate first byte by memchr, the rest by memcmp.
            while found.count < limit, position + needle.count <= haystack.count,
                let candidate = memchr(start + position, Int32(needle[0]), haystack.count - needle.count - position + 1)
            {
                let offset = start.distance(to: UnsafeRawPointer(candidate))
                if memcmp(candidate, pattern, needle.count) == 0 {
                    found.append(offset)
                    position = offset + needle.count
                } else {
                    position = offset + 1
                }
            }
            return found
        }
    }
}

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self).debugDescription }
