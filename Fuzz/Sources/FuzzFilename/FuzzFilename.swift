// Fuzz target: the file name a response suggests (`Content-Disposition`'s `filename*` and `filename`, or
// the URL's last segment).
//
// Oracle: nothing unsafe ever comes out: no name at all, or a non-empty name of at most 255 bytes that
// is not `.` or `..`, does not start with a dot, holds no `..`, no `/` or `\`, no control character and
// no format character (bidi overrides, zero-width characters).

import HTTPTypes

import FuzzSupport

@testable import CurlewEngine

/// The entry point SwiftPM links as `main` (see `runFuzzer`).
@_cdecl("FuzzFilename_main")
public func fuzzFilenameMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzFilename)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFilename(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let input = UnsafeBufferPointer(start: data, count: size)
    // Up to the first NUL: the header value; after it: the URL's path (both as bytes on the wire).
    let split = input.firstIndex(of: 0) ?? input.count
    let value = String(decoding: input[..<split], as: UTF8.self)
    let path = split < input.count ? String(decoding: input[(split + 1)...], as: UTF8.self) : ""

    let disposition = ContentDisposition(value)
    for candidate in [disposition.extendedFilename, disposition.filename] {
        if let candidate { check(SafeFilename.make(candidate)) }
    }
    var fields = HTTPFields()
    fields.append(HTTPField(name: .contentDisposition, value: value))
    let head = ResponseHead(
        status: .ok, headerFields: fields, effectiveURL: "http://example.com/" + path, httpVersion: .http1_1)
    check(head.suggestedFilename)
    return 0
}

private func check(_ name: String?) {
    guard let name else { return }
    expect(!name.isEmpty && name.utf8.count <= 255, "length \(name.utf8.count)")
    expect(name != "." && name != "..")
    expect(name.utf8.first != UInt8(ascii: "."), "hidden: \(name.debugDescription)")
    expect(!name.contains(".."), "dots: \(name.debugDescription)")
    for scalar in name.unicodeScalars {
        expect(scalar != "/" && scalar != "\\", "separator: \(name.debugDescription)")
        expect(!(scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value)), "control: \(name.debugDescription)")
        expect(scalar.properties.generalCategory != .format, "format: \(name.debugDescription)")
    }
}
