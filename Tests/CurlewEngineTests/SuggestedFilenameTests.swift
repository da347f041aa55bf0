// Curlew — the file name a response suggests (`ResponseHead.suggestedFilename`): RFC 6266's
// Content-Disposition `filename` and RFC 8187's `filename*`, the effective URL's last segment as the
// fallback, and the name made safe to join to a directory whatever the server sent.

import CurlewEngine
import HTTPTypes
import Testing

/// One row of the table: what the server sent and the name expected.
private struct SuggestedNameCase: Sendable, CustomTestStringConvertible {
    /// The Content-Disposition value; nil: no such field.
    let disposition: String?
    /// The response's effective URL.
    let url: String
    let expected: String?
    let why: String

    init(_ why: String, _ disposition: String?, url: String = "https://example.com/files/from-url.bin", _ expected: String?) {
        self.why = why
        self.disposition = disposition
        self.url = url
        self.expected = expected
    }

    var testDescription: String { why }

    var head: ResponseHead {
        var fields = HTTPFields()
        if let disposition { fields[.contentDisposition] = disposition }
        return ResponseHead(status: .ok, headerFields: fields, effectiveURL: url)
    }
}

private let dispositionCases: [SuggestedNameCase] = [
    // Plain, quoted and token forms.
    SuggestedNameCase("plain token", "attachment; filename=report.pdf", "report.pdf"),
    SuggestedNameCase("inline disposition", "inline; filename=inline.txt", "inline.txt"),
    SuggestedNameCase("quoted", #"attachment; filename="annual report.pdf""#, "annual report.pdf"),
    SuggestedNameCase("quoted with escaped quotes", #"attachment; filename="my \"quoted\" file.txt""#, #"my "quoted" file.txt"#),
    SuggestedNameCase("quoted-pair of an ordinary character", #"attachment; filename="\a\b\c.txt""#, "abc.txt"),
    SuggestedNameCase("token with - and _", "attachment; filename=simple-token_1.bin", "simple-token_1.bin"),
    SuggestedNameCase("no space after the semicolon", "attachment;filename=nospace.txt", "nospace.txt"),
    SuggestedNameCase("spaces around =", #"attachment; filename = "spaced.txt""#, "spaced.txt"),
    SuggestedNameCase("token followed by spaces and another parameter", "attachment; filename=trimmed.txt   ; size=10", "trimmed.txt"),
    SuggestedNameCase("a ; inside quotes", #"attachment; filename="semi;colon.txt""#, "semi;colon.txt"),
    SuggestedNameCase(
        "filename= inside another parameter's quoted value", #"attachment; note="x; filename=evil.txt"; filename=good.txt"#,
        "good.txt"),
    SuggestedNameCase("a parameter that only ends in filename", "attachment; xfilename=evil.txt", "from-url.bin"),
    SuggestedNameCase("the first of two filename parameters", "attachment; filename=first.txt; filename=second.txt", "first.txt"),
    SuggestedNameCase("percent escapes in filename are not decoded (RFC 6266 §4.3)", "attachment; filename=na%C3%AFve.txt", "na%C3%AFve.txt"),
    SuggestedNameCase("raw UTF-8 in a quoted filename", #"attachment; filename="naïve café.txt""#, "naïve café.txt"),
    SuggestedNameCase("disposition type alone", "attachment", "from-url.bin"),

    // RFC 8187 filename*.
    SuggestedNameCase("filename* UTF-8", "attachment; filename*=UTF-8''%E2%82%AC%20rates.txt", "€ rates.txt"),
    SuggestedNameCase("filename* utf-8 in lower case", "attachment; filename*=utf-8''%e2%82%ac.txt", "€.txt"),
    SuggestedNameCase("filename* with a language tag", "attachment; filename*=UTF-8'en'%C2%A3%20rates.txt", "£ rates.txt"),
    SuggestedNameCase(
        "filename* after filename is preferred", #"attachment; filename="naive.txt"; filename*=UTF-8''na%C3%AFve.txt"#, "naïve.txt"),
    SuggestedNameCase(
        "filename* before filename is preferred", #"attachment; filename*=UTF-8''na%C3%AFve.txt; filename="naive.txt""#, "naïve.txt"),
    SuggestedNameCase("filename* ISO-8859-1", "attachment; filename*=ISO-8859-1''%A3%20rates.txt", "£ rates.txt"),
    SuggestedNameCase("filename* iso-8859-1 in lower case", "attachment; filename*=iso-8859-1''caf%E9.txt", "café.txt"),
    SuggestedNameCase(
        "filename* of an unknown charset falls back to filename", #"attachment; filename*=KOI8-R''%C1%C2.txt; filename="fallback.txt""#,
        "fallback.txt"),
    SuggestedNameCase("filename* of an unknown charset alone falls back to the URL", "attachment; filename*=KOI8-R''%C1%C2.txt", "from-url.bin"),
    SuggestedNameCase(
        "filename* with an invalid escape falls back to filename", "attachment; filename*=UTF-8''bad%ZZname.txt; filename=plain.txt",
        "plain.txt"),
    SuggestedNameCase(
        "filename* with a truncated escape falls back to filename", "attachment; filename*=UTF-8''bad%E; filename=plain.txt", "plain.txt"),
    SuggestedNameCase(
        "filename* that is not UTF-8 falls back to filename", "attachment; filename*=UTF-8''%FF%FE.txt; filename=plain.txt", "plain.txt"),
    SuggestedNameCase("filename* without its two quotes is ignored", "attachment; filename*=report.pdf; filename=plain.txt", "plain.txt"),
    SuggestedNameCase("an empty filename* falls back to filename", "attachment; filename*=UTF-8''; filename=plain.txt", "plain.txt"),
    SuggestedNameCase("filename* of .. falls back to filename", "attachment; filename*=UTF-8''..; filename=plain.txt", "plain.txt"),

    // Case-insensitive parameter names.
    SuggestedNameCase("FILENAME=", "attachment; FILENAME=upper.txt", "upper.txt"),
    SuggestedNameCase("Filename*=", "attachment; Filename*=UTF-8''mixed%20case.txt", "mixed case.txt"),
    SuggestedNameCase("FileName* over FILENAME", "ATTACHMENT; FILENAME=plain.txt; FileName*=UTF-8''%C3%A9.txt", "é.txt"),

    // Path separators: never a `/`, never `..`.
    SuggestedNameCase("relative traversal", #"attachment; filename="../../etc/passwd""#, "__._etc_passwd"),
    SuggestedNameCase("absolute path", #"attachment; filename="/etc/passwd""#, "_etc_passwd"),
    SuggestedNameCase("a directory and a name", "attachment; filename=dir/sub/name.txt", "dir_sub_name.txt"),
    SuggestedNameCase("traversal percent-encoded in filename*", "attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd", "__._etc_passwd"),
    SuggestedNameCase("backslashes (quoted-pairs)", #"attachment; filename="..\\..\\windows\\win.ini""#, "__._windows_win.ini"),
    SuggestedNameCase("a backslash in a token", #"attachment; filename=a\b.txt"#, "a_b.txt"),
    SuggestedNameCase("backslashes in filename*", "attachment; filename*=UTF-8''..%5C..%5Cwin.ini", "__._win.ini"),
    SuggestedNameCase("a lone slash", #"attachment; filename="/""#, "_"),
    SuggestedNameCase("runs of dots inside a name become one", #"attachment; filename="a..b...c.txt""#, "a.b.c.txt"),

    // Control characters: C0, DEL and C1 are removed.
    SuggestedNameCase("NUL, CR and LF", "attachment; filename*=UTF-8''evil%00%0D%0Aname.txt", "evilname.txt"),
    SuggestedNameCase("tab, DEL and a C1 control", "attachment; filename*=UTF-8''a%09b%7Fc%C2%85d.txt", "abcd.txt"),
    SuggestedNameCase("a raw tab in a quoted filename", "attachment; filename=\"tab\there.txt\"", "tabhere.txt"),
    SuggestedNameCase("controls only fall back to the URL", "attachment; filename*=UTF-8''%01%02%03", "from-url.bin"),
    SuggestedNameCase("ISO-8859-1 C1 bytes are removed", "attachment; filename*=ISO-8859-1''a%85%9Fb.txt", "ab.txt"),

    // Leading dots: no hidden files.
    SuggestedNameCase("a dotfile", #"attachment; filename=".bashrc""#, "_bashrc"),
    SuggestedNameCase("a dotfile with an extension", "attachment; filename=.hidden.txt", "_hidden.txt"),
    SuggestedNameCase("dots before a name", "attachment; filename=...name", "_name"),
    SuggestedNameCase("a dot after removed controls", "attachment; filename*=UTF-8''%00%01.profile", "_profile"),
    SuggestedNameCase("a dot after leading spaces", #"attachment; filename="   .hidden""#, "_hidden"),
    // A combining mark after the dot makes one Character of them, but the file name still starts with
    // the byte `.`: a hidden file.
    SuggestedNameCase("a dot carrying a combining mark", "attachment; filename*=UTF-8''.%CC%81bashrc", "_\u{301}bashrc"),
    SuggestedNameCase("a right-to-left override", "attachment; filename*=UTF-8''invoice%E2%80%AEfdp.exe", "invoicefdp.exe"),
    SuggestedNameCase("zero-width and bidi isolates", "attachment; filename*=UTF-8''a%E2%80%8Bb%E2%81%A6c%E2%81%A9.txt", "abc.txt"),

    // Nothing usable: the URL's segment.
    SuggestedNameCase("empty quoted", #"attachment; filename="""#, "from-url.bin"),
    SuggestedNameCase("empty token", "attachment; filename=", "from-url.bin"),
    SuggestedNameCase("spaces only", #"attachment; filename="   ""#, "from-url.bin"),
    SuggestedNameCase("a dot", #"attachment; filename=".""#, "from-url.bin"),
    SuggestedNameCase("two dots", "attachment; filename=..", "from-url.bin"),
    SuggestedNameCase("three dots", #"attachment; filename="...""#, "from-url.bin"),
    SuggestedNameCase("dots around a removed NUL", "attachment; filename*=UTF-8''.%00.", "from-url.bin"),
    SuggestedNameCase("surrounding spaces are trimmed", #"attachment; filename="  spaced name.txt  ""#, "spaced name.txt"),
]

private let urlCases: [SuggestedNameCase] = [
    SuggestedNameCase("no Content-Disposition", nil, url: "https://example.com/files/report.pdf", "report.pdf"),
    SuggestedNameCase("percent-decoded", nil, url: "https://example.com/files/annual%20report%202024.pdf", "annual report 2024.pdf"),
    SuggestedNameCase("percent-decoded UTF-8", nil, url: "https://example.com/caf%C3%A9.txt", "café.txt"),
    SuggestedNameCase("a query and a fragment", nil, url: "https://example.com/dl/archive.tar.gz?token=a/b.c#part/two", "archive.tar.gz"),
    SuggestedNameCase("a fragment alone", nil, url: "https://example.com/dl/notes.md#section", "notes.md"),
    SuggestedNameCase("ending in /", nil, url: "https://example.com/files/reports/", "reports"),
    SuggestedNameCase("a port and user info", nil, url: "http://user:secret@127.0.0.1:8080/x/data.bin", "data.bin"),
    SuggestedNameCase("no path", nil, url: "https://example.com", nil),
    SuggestedNameCase("the root path", nil, url: "https://example.com/", nil),
    SuggestedNameCase("only slashes", nil, url: "https://example.com///", nil),
    SuggestedNameCase("a query without a path", nil, url: "https://example.com?next=/a/b.txt", nil),
    SuggestedNameCase("a fragment without a path", nil, url: "https://example.com#/route/x.txt", nil),
    SuggestedNameCase("no URL at all", nil, url: "", nil),
    SuggestedNameCase("an encoded traversal", nil, url: "https://example.com/a/..%2F..%2Fetc%2Fpasswd", "__._etc_passwd"),
    SuggestedNameCase("an encoded ..", nil, url: "https://example.com/files/%2E%2E", nil),
    SuggestedNameCase("an encoded slash alone", nil, url: "https://example.com/files/%2F", "_"),
    SuggestedNameCase("an encoded dotfile", nil, url: "https://example.com/%2Eenv", "_env"),
    SuggestedNameCase("an encoded NUL", nil, url: "https://example.com/a%00b.txt", "ab.txt"),
    SuggestedNameCase("an invalid escape is kept", nil, url: "https://example.com/100%ZZ.txt", "100%ZZ.txt"),
    SuggestedNameCase("escapes that are not UTF-8 are kept", nil, url: "https://example.com/%FF.bin", "%FF.bin"),
    SuggestedNameCase(
        "Content-Disposition without a name falls back to the URL", "attachment", url: "https://example.com/f/x.zip", "x.zip"),
    SuggestedNameCase(
        "an unusable filename and an unusable URL give nil", #"attachment; filename="..""#, url: "https://example.com/", nil),
]

@Suite struct SuggestedFilenameTests {
    @Test(arguments: dispositionCases)
    fileprivate func contentDisposition(_ row: SuggestedNameCase) {
        #expect(row.head.suggestedFilename == row.expected, "\(row.disposition ?? "none") at \(row.url)")
    }

    @Test(arguments: urlCases)
    fileprivate func effectiveURL(_ row: SuggestedNameCase) {
        #expect(row.head.suggestedFilename == row.expected, "\(row.disposition ?? "none") at \(row.url)")
    }

    /// Every name the tables give is one file name in the directory: no `/`, no NUL, not `.`, `..` or a
    /// dotfile, no `..` anywhere.
    @Test func everySuggestedNameIsOneSafeFileName() {
        for row in dispositionCases + urlCases {
            guard let name = row.head.suggestedFilename else { continue }
            #expect(!name.isEmpty, "\(row.why)")
            // Bytes, not Characters: a `.` or `/` followed by a combining mark is another Character.
            let bytes = Array(name.utf8)
            #expect(!bytes.contains(UInt8(ascii: "/")), "\(row.why): \(name)")
            #expect(!bytes.contains(UInt8(ascii: "\\")), "\(row.why): \(name)")
            #expect(!zip(bytes, bytes.dropFirst()).contains { $0 == UInt8(ascii: ".") && $1 == UInt8(ascii: ".") }, "\(row.why): \(name)")
            #expect(bytes.first != UInt8(ascii: "."), "\(row.why): \(name)")
            #expect(!name.unicodeScalars.contains { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) }, "\(row.why): \(name)")
            #expect(name.utf8.count <= 255, "\(row.why): \(name.utf8.count) bytes")
        }
    }

    // MARK: Long names

    /// A name longer than 255 bytes is cut to at most 255 bytes, whole characters only (what is left is a
    /// prefix of the name, and valid UTF-8).
    @Test(arguments: [
        (String(repeating: "a", count: 300), String(repeating: "a", count: 255)),
        // 2-byte characters: 127 of them (254 bytes); a 128th would make 256.
        (String(repeating: "é", count: 200), String(repeating: "é", count: 127)),
        // 4-byte characters: 63 of them (252 bytes).
        (String(repeating: "😀", count: 100), String(repeating: "😀", count: 63)),
        // 3-byte characters after one ASCII byte: 1 + 84 × 3 = 253.
        ("x" + String(repeating: "€", count: 100), "x" + String(repeating: "€", count: 84)),
    ])
    func aLongNameIsCutTo255BytesOnACharacterBoundary(name: String, expected: String) {
        let encoded = name.utf8.map { byte -> String in
            let hex = String(byte, radix: 16, uppercase: true)
            return "%" + (hex.count == 1 ? "0" + hex : hex)
        }.joined()
        let viaExtended = SuggestedNameCase("long filename*", "attachment; filename*=UTF-8''\(encoded)", nil).head.suggestedFilename
        #expect(viaExtended == expected)
        #expect(viaExtended.map { $0.utf8.count <= 255 } == true)
        let viaURL = SuggestedNameCase("long URL segment", nil, url: "https://example.com/\(encoded)", nil).head.suggestedFilename
        #expect(viaURL == expected)
    }

    /// A name of exactly 255 bytes is kept whole.
    @Test func aNameOfExactly255BytesIsKept() {
        let name = String(repeating: "b", count: 251) + ".txt"
        #expect(SuggestedNameCase("255 bytes", "attachment; filename=\(name)", nil).head.suggestedFilename == name)
    }

    /// A first character (a grapheme cluster: a letter and combining marks) that alone is longer than 255
    /// bytes cannot be cut on a character boundary: no usable name is left, so the URL's segment is used,
    /// never an empty name (which would name the directory itself).
    @Test func aNameWhoseFirstCharacterIsLongerThan255BytesFallsBackToTheURL() {
        // "e" and 200 combining acute accents (2 bytes each): one character of 401 bytes.
        let zalgo = "e" + String(repeating: "%CC%81", count: 200) + ".txt"
        let head = SuggestedNameCase("huge grapheme", "attachment; filename*=UTF-8''\(zalgo)", nil).head
        #expect(head.suggestedFilename == "from-url.bin")
        let onlyURL = SuggestedNameCase("huge grapheme in the URL", nil, url: "https://example.com/\(zalgo)", nil).head
        #expect(onlyURL.suggestedFilename != "")
        #expect(onlyURL.suggestedFilename == nil)
    }

    /// Two Content-Disposition fields are one list to HTTPFields (`, `-joined): the first field's name
    /// wins as far as its token runs, and what comes out is still one safe name.
    @Test func twoContentDispositionFieldsGiveOneSafeName() {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .contentDisposition, value: #"attachment; filename="first.txt""#))
        fields.append(HTTPField(name: .contentDisposition, value: "attachment; filename=../second.txt"))
        let name = ResponseHead(status: .ok, headerFields: fields, effectiveURL: "https://example.com/x.bin").suggestedFilename
        #expect(name == "first.txt")
    }
}
