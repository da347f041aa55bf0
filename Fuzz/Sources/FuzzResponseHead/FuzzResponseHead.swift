// Fuzz target: the response-head parser, fed lines as libcurl delivers them (each with its line end).
//
// Oracle: no crash; a rejected head is a typed failure; every field of an accepted head has a name that
// is an HTTP token and a value that swift-http-types accepts (no CR, LF or NUL, no leading or trailing
// whitespace), the status code has three digits, and a head with a `Transfer-Encoding` has no
// `Content-Length` to go by (libcurl ignores it then).
//
// Dump mode: with `FUZZ_HEAD_DUMP=<file>` set, each input run appends one JSON line to the file: the
// input (hex), the verdict (`accepted`, `rejected` with the typed reason, or `incomplete` when the input
// ends before the head does), and for an accepted head the final status code, the status line's version,
// the codes of the interim (1xx) heads before it, the body's framing as the engine reads it (chunked, and
// the Content-Length it goes by) and the fields as Curlew exposes them (name as received,
// value as a String and its bytes in hex: a value that is not UTF-8 keeps its bytes). Run the binary
// with `-runs=0 <dir>` or with file arguments to run each input once; `Fuzz/Scripts/h11_compare.py`
// compares the dump with Python's h11.

import Glibc
import HTTPTypes

import FuzzSupport

@testable import CurlewEngine

/// The entry point SwiftPM links as `main` (see `runFuzzer`).
@_cdecl("FuzzResponseHead_main")
public func fuzzResponseHeadMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzResponseHead)
}

/// The file `FUZZ_HEAD_DUMP` names, opened once for appending; nil when fuzzing.
nonisolated(unsafe) private let dumpFile: UnsafeMutablePointer<FILE>? = {
    guard let path = getenv("FUZZ_HEAD_DUMP") else { return nil }
    guard let file = fopen(path, "a") else { expectationFailed("cannot open FUZZ_HEAD_DUMP \(String(cString: path))") }
    return file
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponseHead(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let input = UnsafeRawBufferPointer(start: data, count: size)
    if let dumpFile { return dumpResponseHead(input, to: dumpFile) }
    var parser = ResponseHeadParser(maxHeadBytes: 16 * 1024)
    var start = 0
    while start < input.count {
        var end = start
        while end < input.count, input[end] != UInt8(ascii: "\n") { end += 1 }
        if end < input.count { end += 1 }  // the line keeps its LF, as curl's header callback gets it
        switch parser.consume(UnsafeRawBufferPointer(rebasing: input[start..<end])) {
        case .more:
            break
        case .failure(let code, let message):
            expect(code == .invalidResponse || code == .headersTooLarge, "untyped rejection \(code)")
            expect(!message.isEmpty)
            return 0
        case .complete:
            check(parser)
            return 0
        }
        start = end
    }
    return 0
}

private func check(_ parser: ResponseHeadParser) {
    expect((0...999).contains(parser.statusCode), "status \(parser.statusCode)")
    if let length = parser.contentLength { expect(length >= 0) }
    let fields = parser.fields
    if fields[.transferEncoding] != nil { expect(parser.contentLength == nil, "Content-Length kept beside Transfer-Encoding") }
    for field in fields {
        expect(HTTPField.Name(field.name.rawName) != nil, "name \(field.name.rawName.debugDescription)")
        expect(HTTPField.isValidValue(field.value), "value \(field.value.debugDescription)")
        expect(!field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }))
    }
}

// MARK: - Dump mode

/// Runs `input` through the parser as the fuzzing path does, appends its JSON line to `file`, then applies
/// the same oracle. Which line starts a head is followed from outside, by the parser's own rule: the first
/// non-blank line, and the first after the blank line that ends an interim head.
private func dumpResponseHead(_ input: UnsafeRawBufferPointer, to file: UnsafeMutablePointer<FILE>) -> CInt {
    var record = "{\"input\":\"\(hex(input))\""
    var parser = ResponseHeadParser(maxHeadBytes: 16 * 1024)
    var expectsStatusLine = true
    var version = ""
    var interim: [Int] = []
    var verdict: ResponseHeadParser.Event = .more
    var start = 0
    while start < input.count, verdict == .more {
        var end = start
        while end < input.count, input[end] != UInt8(ascii: "\n") { end += 1 }
        if end < input.count { end += 1 }
        let line = UnsafeRawBufferPointer(rebasing: input[start..<end])
        var content = line.count
        while content > 0, line[content - 1] == 0x0A || line[content - 1] == 0x0D { content -= 1 }
        verdict = parser.consume(line)
        if verdict == .more, expectsStatusLine, content > 0 {
            // An accepted status line: `HTTP/`, the version, a space.
            expectsStatusLine = false
            version = String(decoding: line[5...].prefix(while: { $0 != 0x20 }), as: UTF8.self)
        } else if verdict == .more, !expectsStatusLine, content == 0 {
            interim.append(parser.statusCode)
            expectsStatusLine = true
        }
        start = end
    }
    switch verdict {
    case .more:
        record += ",\"verdict\":\"incomplete\""
    case .failure(let code, let message):
        record += ",\"verdict\":\"rejected\",\"code\":\(jsonString(code.description)),\"message\":\(jsonString(message))"
    case .complete:
        record += ",\"verdict\":\"accepted\",\"status\":\(parser.statusCode),\"version\":\(jsonString(version))"
        record += ",\"http2\":\(parser.isHTTP2),\"interim\":[\(interim.map(String.init).joined(separator: ","))]"
        record += ",\"chunked\":\(parser.isChunked),\"contentLength\":\(parser.contentLength.map(String.init) ?? "null")"
        let fields = parser.fields.map { field in
            "[\(jsonString(field.name.rawName)),\(jsonString(field.value)),\"\(field.withUnsafeBytesOfValue { hex(UnsafeRawBufferPointer($0)) })\"]"
        }
        record += ",\"fields\":[\(fields.joined(separator: ","))]"
    }
    record += "}\n"
    fputs(record, file)
    fflush(file)
    if case .failure(let code, let message) = verdict {
        expect(code == .invalidResponse || code == .headersTooLarge, "untyped rejection \(code)")
        expect(!message.isEmpty)
    } else if verdict == .complete {
        check(parser)
    }
    return 0
}

private func hex(_ bytes: UnsafeRawBufferPointer) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}
