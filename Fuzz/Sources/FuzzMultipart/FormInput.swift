// The form a FuzzMultipart input describes: the method, the boundary, and 0 to 8 parts.
//
// Byte 0 holds flags: bits 0–1 zero for Curlew's default (random) boundary, else the boundary is the
// first field; bits 2–4 choose the method (POST three times out of eight; GET and HEAD cannot carry a
// form); bit 5 lets parts be large (at least the 64 KiB from which Curlew keeps a part's own storage).
// The rest is fields separated by 0xFF: the boundary, then four per part: a control byte followed by the
// name, the file name, the MIME type, the bytes. The control byte of a part:
//   bit 0: the file name is sent; bit 1: the MIME type is sent;
//   bit 2: a file part (the bytes written to a file; without bit 0, the file's own name is the third
//          field, without `/` and NUL);
//   bit 3: with flag bit 5, the bytes repeated to at least 64 KiB (data parts);
//   bits 4–5: boundary-like text put in the bytes: none, CRLF `--` boundary, `--` boundary `--`, or a near
//             miss (CRLF `--` and the boundary without its last character; always this one in a file
//             with a chosen boundary);
//   bits 6–7: where: at the start, a third in, two thirds in, at the end.
// With the default boundary, the text put in is built on `curlew-`, which starts every random boundary.
// Names are decoded as UTF-8 (an invalid byte becomes U+FFFD).

import Curlew
import Foundation

/// One part the input describes.
struct PartInput {
    var name: String
    var fileName: String?
    var mimeType: String?
    var data: [UInt8]
    /// For a file part: the file's name in its directory.
    var fileOnDisk: String?
}

/// The form the input describes.
struct FormInput {
    var method: HTTPRequest.Method
    /// The boundary chosen; nil for Curlew's default.
    var boundary: String?
    var parts: [PartInput]
    /// The bytes each part must hold, in order (a file part's are its file's).
    var partBytes: [[UInt8]] { parts.map(\.data) }

    static let methods: [HTTPRequest.Method] = [.post, .post, .post, .put, .patch, .connect, .get, .head]

    init(_ input: [UInt8]) {
        let flags = input.first ?? 0
        method = Self.methods[Int(flags >> 2) & 7]
        let fields = input.dropFirst().split(separator: 0xFF, maxSplits: 32, omittingEmptySubsequences: false)
        let boundaryField = fields.first.map { String(decoding: $0, as: UTF8.self) } ?? ""
        boundary = flags & 3 == 0 ? nil : boundaryField
        let allowLarge = flags & 0x20 != 0

        var parts: [PartInput] = []
        var index = 1
        while index < fields.count, parts.count < 8 {
            let field = { (offset: Int) -> ArraySlice<UInt8> in
                index + offset < fields.count ? fields[index + offset] : []
            }
            let control = field(0).first ?? 0
            let name = String(decoding: field(0).dropFirst(), as: UTF8.self)
            let third = String(decoding: field(1), as: UTF8.self)
            let mimeType = control & 2 != 0 ? String(decoding: field(2), as: UTF8.self) : nil
            var data = Array(field(3))
            let injected: [UInt8]
            let marker = Array((boundary ?? "curlew-").utf8)
            let isFile = control & 4 != 0
            // A file holding a chosen boundary leaves nothing to check (a file's bytes are the caller's
            // promise): in a file, the text put in is always the near miss.
            switch isFile && boundary != nil ? 3 : (control >> 4) & 3 {
            case 1: injected = Array("\r\n--".utf8) + marker
            case 2: injected = Array("--".utf8) + marker + Array("--".utf8)
            case 3: injected = Array("\r\n--".utf8) + marker.dropLast()
            default: injected = []
            }
            if !injected.isEmpty {
                let at = data.count * Int(control >> 6) / 3
                data.insert(contentsOf: injected, at: at)
            }
            if !isFile, allowLarge, control & 8 != 0, !data.isEmpty {
                let copies = (64 * 1024 + data.count - 1) / data.count + 1
                data = Array([[UInt8]](repeating: data, count: copies).joined())
            }
            var part = PartInput(
                name: name, fileName: control & 1 != 0 ? third : nil, mimeType: mimeType, data: data, fileOnDisk: nil)
            if isFile {
                part.fileOnDisk = part.fileName == nil ? Self.diskName(third) : "part"
            }
            parts.append(part)
            index += 4
        }
        self.parts = parts
    }

    /// A name a file can have: without `/` and NUL, at most 200 bytes, not empty, `.` or `..`.
    private static func diskName(_ text: String) -> String {
        var name = ""
        for scalar in text.unicodeScalars where scalar != "/" && scalar != "\0" {
            guard name.utf8.count + String(scalar).utf8.count <= 200 else { break }
            name.unicodeScalars.append(scalar)
        }
        return name.isEmpty || name == "." || name == ".." ? "part" : name
    }
}
