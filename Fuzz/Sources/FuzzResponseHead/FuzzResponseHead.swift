// Fuzz target: the response-head parser, fed lines as libcurl delivers them (each with its line end).
//
// Oracle: no crash; a rejected head is a typed failure; every field of an accepted head has a name that
// is an HTTP token and a value that swift-http-types accepts (no CR, LF or NUL, no leading or trailing
// whitespace), and the status code has three digits.

import HTTPTypes

import FuzzSupport

@testable import CurlewEngine

/// The entry point SwiftPM links as `main` (see `runFuzzer`).
@_cdecl("FuzzResponseHead_main")
public func fuzzResponseHeadMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzResponseHead)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponseHead(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let input = UnsafeRawBufferPointer(start: data, count: size)
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
    for field in parser.fields {
        expect(HTTPField.Name(field.name.rawName) != nil, "name \(field.name.rawName.debugDescription)")
        expect(HTTPField.isValidValue(field.value), "value \(field.value.debugDescription)")
        expect(!field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }))
    }
}
