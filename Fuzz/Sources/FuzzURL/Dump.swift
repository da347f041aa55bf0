// FuzzURL's dump mode: with FUZZ_URL_DUMP=<dir>, every redirect input run appends a JSON line to
// <dir>/FuzzURL.jsonl (base, Location, Curlew's resolution, the URL Curlew follows (null: refused),
// libcurl's own CURLINFO_REDIRECT_URL, the RFC 3986 transcription's), which Fuzz/Scripts/url_compare.py
// compares with a WHATWG parser.

import FuzzSupport
import Glibc

enum Dump {
    private static let path: String? = getenv("FUZZ_URL_DUMP").map { String(cString: $0) + "/FuzzURL.jsonl" }

    static func redirect(
        base: String, location: String, curlew: String?, follows: String?, libcurl: String?, rfc: String?
    ) {
        guard let path else { return }
        let line =
            "{\"base\":\(jsonString(base)),\"location\":\(jsonString(location)),\"curlew\":\(jsonString(curlew)),"
            + "\"follows\":\(jsonString(follows)),\"libcurl\":\(jsonString(libcurl)),\"rfc\":\(jsonString(rfc))}\n"
        guard let file = fopen(path, "a") else { return }
        _ = line.withCString { fputs($0, file) }
        fclose(file)
    }
}
