// Fuzz target: URLs as Curlew builds and follows them. Byte 0 picks the part (mod 4), byte 1 its
// options; the rest is NUL-separated text and, for parameters, a small grammar (see `Input`).
//
// Oracle:
// 0. Query encoding: `URLEncoding.query` for parameters from the input (nested objects and arrays, Booleans,
//    numbers, strings with any Unicode; every array and Boolean encoding) holds only unreserved bytes,
//    upper-case `%XX`, and `=` / `&` as separators (nested keys' brackets escaped as well); each key and value
//    percent-decodes to exactly the key path (`key[sub]`, `key[]`, `key[i]`) and value text the
//    documentation gives, in sorted key order.
// 1. Endpoint composition: `Endpoint.defaultURL` joins base URL and path byte for byte as documented (the
//    process-wide join cache included: two paths, then the first again); `urlRequest()` refuses exactly the
//    URLs it documents refusing and appends the query before the fragment; libcurl then parses the URL as
//    Curlew meant it: the escaped path (dot segments removed), the query, the base's fragment. A `?` or `#`
//    of a path never becomes a delimiter, and the URL is refused only if its base already is.
// 2, 3. Redirects: the URL followed for a `Location` (`ParsedURL.resolve`, which buffered and streamed
//    responses both use, then the session's URL cache, which must hand back what parsing gives, byte for
//    byte) equals RFC 3986 §5.2 resolution transcribed here (on libcurl's normalised base; the result
//    normalised by libcurl), or both refuse. Normalised, each with its reason: libcurl's escaping of
//    spaces and non-ASCII bytes in relative references, empty path segments (all but the path must
//    agree), a scheme without `//` and a host, a scheme past libcurl's 40 characters. Then
//    `RedirectRules.decide` follows the documented rules: statuses followed, unparsable or non-http(s)
//    targets and https-to-http refused, a hop back to the same request (same bytes) a loop, methods
//    rewritten with their body fields, and on a hop that leaves the origin (scheme, host with any IPv6
//    zone, port: read from the URL text here) only Accept, Accept-Language, Accept-Encoding, User-Agent,
//    Range, If-Range (and Content-Type with a resent body) kept, never a sensitive field.
// With FUZZ_URL_DUMP=<dir>, each redirect input also appends a JSON line for Fuzz/Scripts/url_compare.py.

import FuzzSupport

/// The entry point SwiftPM links as `main` (see `runFuzzer`).
@_cdecl("FuzzURL_main")
public func fuzzURLMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzURL)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzURL(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size >= 2 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let part = bytes[0] & 3
    let options = bytes[1]
    var input = Input(bytes[2...])
    switch part {
    case 0: fuzzQuery(options: options, &input)
    case 1: fuzzEndpoint(options: options, &input)
    default: fuzzRedirect(options: options, &input)
    }
    return 0
}
