// FuzzURL's dump mode: with FUZZ_URL_DUMP=<dir>, every redirect input run appends a JSON line to
// <dir>/FuzzURL.jsonl (base, Location, Curlew's resolution, the URL Curlew follows (null: refused),
// libcurl's own CURLINFO_REDIRECT_URL, the RFC 3986 transcription's), which Fuzz/Scripts/url_compare.py
// compares with a WHATWG parser.

import Glibc

enum Dump {
    private static let path: String? = getenv("FUZZ_URL_DUMP").map { String(cString: $0) + "/FuzzURL.jsonl" }

    static func redirect(
        base: String, location: String, curlew: String?, follows: String?, libcurl: String?, rfc: String?
    ) {
        guard let path else { return }
        let line =
            "{\"base\":\(json(base)),\"location\":\(json(location)),\"curlew\":\(json(curlew)),"
            + "\"follows\":\(json(follows)),\"libcurl\":\(json(libcurl)),\"rfc\":\(json(rfc))}\n"
        guard let file = fopen(path, "a") else { return }
        _ = line.withCString { fputs($0, file) }
        fclose(file)
    }

    private static func json(_ text: String?) -> String {
        guard let text else { return "null" }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
