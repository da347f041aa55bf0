// Curlew — the header names servers send most, recognised without allocating.

import HTTPTypes

#if canImport(Glibc)
import Glibc
#endif

/// Field names that nearly every response carries, in the spellings servers use (canonical case as
/// HTTP/1.1 servers send them, and all lowercase as Node, Go and HTTP/2 gateways do).
///
/// Building an `HTTPField.Name` from bytes costs a String, a validation pass and a lowercased copy;
/// the common names are matched byte for byte against names built once, so a typical response head
/// allocates only for its values. Any other spelling takes the general path, keeping the server's
/// exact raw name.
enum KnownFieldNames {
    private struct Entry {
        let bytes: [UInt8]
        let name: HTTPField.Name
    }

    private static let spellings = [
        "Content-Type", "Content-Length", "Date", "Server", "Connection", "Keep-Alive", "Transfer-Encoding",
        "Content-Encoding", "Cache-Control", "ETag", "Etag", "Last-Modified", "Vary", "Set-Cookie", "Location",
        "Expires", "Age", "Accept-Ranges", "Access-Control-Allow-Origin", "Access-Control-Allow-Credentials",
        "Strict-Transport-Security", "X-Content-Type-Options", "X-Frame-Options", "X-XSS-Protection", "Pragma",
        "Via", "WWW-Authenticate", "Retry-After", "Link", "Content-Disposition", "Content-Language",
        "X-Request-Id", "X-Request-ID", "Alt-Svc", "Referrer-Policy", "Content-Security-Policy",
        "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Powered-By", "CF-RAY",
    ]

    /// Entries indexed by name length, so a lookup compares bytes with at most a few candidates.
    private static let byLength: [[Entry]] = {
        var table = [[Entry]](repeating: [], count: 40)
        var seen = Set<String>()
        for spelling in spellings + spellings.map({ $0.lowercased() }) where seen.insert(spelling).inserted {
            guard let name = HTTPField.Name(spelling), spelling.utf8.count < table.count else { continue }
            table[spelling.utf8.count].append(Entry(bytes: Array(spelling.utf8), name: name))
        }
        return table
    }()

    /// The prebuilt name whose raw spelling is exactly `bytes`, if it is a known one.
    static func name(for bytes: UnsafeRawBufferPointer) -> HTTPField.Name? {
        guard bytes.count < byLength.count, let base = bytes.baseAddress else { return nil }
        for entry in byLength[bytes.count] {
            let equal = entry.bytes.withUnsafeBytes { known in
                known.baseAddress.map { memcmp($0, base, bytes.count) == 0 } ?? false
            }
            if equal { return entry.name }
        }
        return nil
    }
}
