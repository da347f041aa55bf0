// Curlew — libcurl's parsed form of a URL, shared by the requests that use it.

import CCurl

/// A `CURLU` handle holding one parsed URL. Immutable once made; freed when the last request using it
/// is done.
final class ParsedURL: @unchecked Sendable {
    // @unchecked: the handle is written only in `init`, on the creating thread, and afterwards only
    // read (libcurl duplicates it when a transfer starts, never changes it). Handing it to the loop
    // goes through the inbox's lock, which orders the write before every read.
    let handle: OpaquePointer
    /// Which connections requests to this URL may use.
    let poolKey: PoolKey
    /// The whole URL as libcurl normalises it (`curl_url_get` with no flags, what libcurl itself reads
    /// from the handle before a transfer), made once: given to each transfer as `CURLOPT_URL` beside
    /// the handle, so that libcurl (through 8.11 at least) does not format it again for every request (about 4,500
    /// instructions with 7.88). Freed with the handle; nil if libcurl could not produce it.
    let normalized: UnsafeMutablePointer<CChar>?

    /// Whether `url` starts with `http://` or `https://`, ignoring case (curl would accept others).
    static func hasHTTPScheme(_ url: String) -> Bool {
        var url = url
        return url.withUTF8 { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            return ASCIICase.hasPrefix(raw, "https://") || ASCIICase.hasPrefix(raw, "http://")
        }
    }

    /// Parses `url` with libcurl's URL parser, or returns libcurl's reason for refusing it.
    static func parse(_ url: String) -> Result<ParsedURL, ParseFailure> {
        guard let handle = curl_url() else { return .failure(.noMemory) }
        let code = url.withCString { curl_url_set(handle, CURLUPART_URL, $0, 0) }
        guard code == CURLUE_OK else {
            curl_url_cleanup(handle)
            return .failure(.refused(curl_url_strerror(code).map { String(cString: $0) } ?? "malformed URL"))
        }
        let scheme = part(handle, CURLUPART_SCHEME) ?? ""
        var host = part(handle, CURLUPART_HOST) ?? ""
        // An IPv6 zone ID names the link the address is on: another zone, another host (and origin, which
        // credentials must not cross), kept as the URL writes it.
        if host.hasPrefix("["), let zone = part(handle, CURLUPART_ZONEID) {
            host = String(host.dropLast()) + "%25" + zone + "]"
        }
        let port = part(handle, CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)).flatMap { Int($0) } ?? 0
        var normalized: UnsafeMutablePointer<CChar>?
        if curl_url_get(handle, CURLUPART_URL, &normalized, 0) != CURLUE_OK { normalized = nil }
        return .success(
            ParsedURL(
                handle, key: PoolKey(scheme: scheme.lowercased(), host: host.lowercased(), port: port),
                normalized: normalized))
    }

    private init(_ handle: OpaquePointer, key: PoolKey, normalized: UnsafeMutablePointer<CChar>?) {
        self.handle = handle
        self.poolKey = key
        self.normalized = normalized
    }

    /// One component of the parsed URL, as libcurl normalised it.
    private static func part(_ handle: OpaquePointer, _ part: CURLUPart, flags: UInt32 = 0) -> String? {
        var pointer: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, part, &pointer, flags) == CURLUE_OK, let pointer else { return nil }
        defer { curl_free(pointer) }
        return String(cString: pointer)
    }

    deinit {
        curl_url_cleanup(handle)
        curl_free(normalized)
    }

    /// `reference` (a `Location` value) resolved against `base` with libcurl's URL parser (libcurl's checks
    /// and its escaping of spaces and other bytes in a relative reference included); nil when it cannot
    /// be parsed.
    ///
    /// libcurl merges the path; the query and fragment are placed by RFC 3986 §5.2.2, where libcurl (7.81
    /// on) strays: the base's fragment takes no part (libcurl 7.88 resolves `x` against `/a/b#f/g` as
    /// `/a/b#f/x`, and before 8.12.0 put a query-only reference after the fragment, curl #15848); an
    /// empty reference (spaces aside) is the base without its fragment, and a fragment-only one (`#part`)
    /// the base with that fragment, where libcurl takes the base's parent path (before 8.8.0 for `#part`,
    /// curl #13394); a query after dot segments (`./?q`, `../?q`) follows the path's last `/`, which
    /// libcurl 7.88 drops (`/a/b` and `./?q` made `/a?q`, not `/a/?q`).
    static func resolve(_ reference: String, against base: String) -> String? {
        guard let handle = baseHandle(base) else { return nil }
        defer { curl_url_cleanup(handle) }
        if !isEmptyReference(reference) {
            // libcurl's reading of the whole reference: its checks, its escaping, its query and fragment.
            // (A handle of its own: curl_url_dup drops an IPv6 zone ID, seen with libcurl 7.88.)
            guard let whole = baseHandle(base) else { return nil }
            defer { curl_url_cleanup(whole) }
            guard set(whole, reference) else { return nil }
            guard let end = reference.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
            else { return part(whole, CURLUPART_URL) }
            // The path alone (when the reference has one), then the reference's query (the base's when it has
            // neither path nor query) and fragment, as text (libcurl would lower-case the escapes in a part
            // it is given) parsed again.
            let path = String(Substring(reference.utf8[..<end]))
            let ownQuery = !path.isEmpty || reference.utf8[end] == UInt8(ascii: "?")
            if !path.isEmpty { guard set(handle, path) else { return nil } }
            if ownQuery { guard curl_url_set(handle, CURLUPART_QUERY, nil, 0) == CURLUE_OK else { return nil } }
            guard var url = part(handle, CURLUPART_URL) else { return nil }
            if ownQuery, let query = part(whole, CURLUPART_QUERY) { url += "?" + query }
            if let fragment = part(whole, CURLUPART_FRAGMENT) { url += "#" + fragment }
            guard set(handle, url) else { return nil }
        }
        return part(handle, CURLUPART_URL)
    }

    /// A handle holding `base` without its fragment; nil when libcurl refuses `base`.
    private static func baseHandle(_ base: String) -> OpaquePointer? {
        guard let handle = curl_url() else { return nil }
        guard base.withCString({ curl_url_set(handle, CURLUPART_URL, $0, 0) }) == CURLUE_OK,
            curl_url_set(handle, CURLUPART_FRAGMENT, nil, 0) == CURLUE_OK
        else {
            curl_url_cleanup(handle)
            return nil
        }
        return handle
    }

    /// `reference` resolved on `handle`, as libcurl resolves a redirect it does not follow.
    private static func set(_ handle: OpaquePointer, _ reference: String) -> Bool {
        reference.withCString { curl_url_set(handle, CURLUPART_URL, $0, UInt32(CURLU_NON_SUPPORT_SCHEME)) } == CURLUE_OK
    }

    /// Whether a `Location` value is an empty reference (spaces and tabs aside): the base URL itself.
    static func isEmptyReference(_ reference: String) -> Bool {
        reference.utf8.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }

    enum ParseFailure: Error {
        case noMemory
        case refused(String)
    }
}

/// The parsed forms of the URLs a session used most recently.
///
/// API clients send many requests to the same few URLs; parsing one with libcurl costs several
/// thousand instructions, a lookup here a few hundred. The cache is bounded: when full it starts over,
/// so a stream of distinct URLs costs one insertion each and memory stays under `capacity` entries.
final class ParsedURLCache: Sendable {
    private struct Entry {
        /// The URL parsed, compared byte for byte on a hit: the dictionary's keys match by canonical
        /// equivalence (`é` and `e\u{301}`), which are different URLs to libcurl.
        let url: String
        let parsed: ParsedURL
        /// Whether the string starts with `http://` or `https://`, ignoring case: checked once per URL.
        let hasHTTPScheme: Bool
    }

    private struct Entries {
        var byURL: [String: Entry] = [:]
        /// The URL found last, compared before hashing: a client calling one endpoint again and again
        /// passes the same string (the same storage, so the comparison is one word), and hashing it cost
        /// about 300 instructions per request.
        var last: (url: String, entry: Entry)?
    }

    private let entries = Locked(Entries())
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The parsed `url`, from the cache or parsed now (and then kept).
    func parsed(_ url: String) -> Result<ParsedURL, ParsedURL.ParseFailure> {
        if let entry = cached(url) { return .success(entry.parsed) }
        return parseAndKeep(url, hasHTTPScheme: ParsedURL.hasHTTPScheme(url)).map(\.parsed)
    }

    /// The parsed `url` when it starts with `http://` or `https://` (ignoring case; curl would take other
    /// schemes), nil otherwise: a URL seen before is not checked again.
    func parsedHTTP(_ url: String) -> Result<ParsedURL, ParsedURL.ParseFailure>? {
        if let entry = cached(url) { return entry.hasHTTPScheme ? .success(entry.parsed) : nil }
        // Checked before parsing: libcurl is not asked about a URL the engine would refuse anyway.
        guard ParsedURL.hasHTTPScheme(url) else { return nil }
        return parseAndKeep(url, hasHTTPScheme: true).map(\.parsed)
    }

    /// The entry kept for `url`, if any.
    private func cached(_ url: String) -> Entry? {
        guard capacity > 0 else { return nil }
        return entries.withLock { entries -> Entry? in
            if let last = entries.last, last.url.hasSameUTF8(as: url) { return last.entry }
            guard let found = entries.byURL[url], found.url.hasSameUTF8(as: url) else { return nil }
            entries.last = (url, found)
            return found
        }
    }

    /// `url` parsed, and kept when it parses.
    // Outside the lock: concurrent misses for one URL may parse it twice, and the later insertion wins,
    // which is harmless.
    private func parseAndKeep(_ url: String, hasHTTPScheme: Bool) -> Result<Entry, ParsedURL.ParseFailure> {
        ParsedURL.parse(url).map { parsed in
            let entry = Entry(url: url, parsed: parsed, hasHTTPScheme: hasHTTPScheme)
            guard capacity > 0 else { return entry }
            entries.withLock { entries in
                if entries.byURL.count >= capacity { entries.byURL.removeAll(keepingCapacity: true) }
                entries.byURL[url] = entry
                entries.last = (url, entry)
            }
            return entry
        }
    }

    /// How many URLs are cached (for tests).
    var count: Int { entries.withLock { $0.byURL.count } }
}

// URL texts compared byte for byte, where Swift's `==` (canonical equivalence) is not what is meant.
extension String {
    /// Whether the two strings hold the same UTF-8 bytes.
    ///
    /// `==` compares by Unicode canonical equivalence: `"é"` (U+00E9) equals `"e\u{301}"`, and two combining
    /// marks equal the same marks in the other order (the same byte count), though in a URL they are
    /// different bytes on the wire, to the server and in libcurl's parsed handle. Equal storage is found
    /// without reading the bytes.
    @inline(__always)
    package func hasSameUTF8(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let contiguous = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in
                mine.baseAddress == theirs.baseAddress || mine.elementsEqual(theirs)
            }
        }
        return (contiguous ?? nil) ?? utf8.elementsEqual(other.utf8)
    }
}
