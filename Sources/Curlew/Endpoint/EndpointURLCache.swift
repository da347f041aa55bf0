// Curlew — the URLs default endpoints joined and `urlRequest()` checked, kept for the next request.

import CurlewEngine

/// The last few joined URLs (``Endpoint/defaultURL(for:baseURL:)``) and URLs found sendable
/// (``Endpoint/urlRequest()``), process-wide.
///
/// A process sends to a handful of (base URL, path) pairs again and again: a lookup costs a lock and a
/// comparison or two, where joining allocates a string and checking reads every byte. A hit also hands
/// every request the same `String`, so the comparisons here and in the engine's parsed-URL cache see
/// identical storage and stop at once. Both results depend only on the strings compared, so a stale
/// entry cannot exist; a miss only costs the work done before.
enum EndpointURLCache {
    /// How many URLs each list keeps: a few targets' paths, compared one by one.
    static let capacity = 8

    private struct Joined: Sendable {
        let base: String
        let path: String
        let url: String
    }

    /// A list of at most ``capacity`` entries, the oldest replaced first.
    private struct Ring<Entry: Sendable>: Sendable {
        var entries: [Entry] = []
        var next = 0

        mutating func insert(_ entry: Entry) {
            if entries.count < EndpointURLCache.capacity {
                entries.append(entry)
            } else {
                entries[next] = entry
                next = (next + 1) % EndpointURLCache.capacity
            }
        }
    }

    // `Locked` (a pthread mutex), not `Mutex`: the thread sanitizer cannot see Mutex's futex slow path.
    private static let joined = Locked(Ring<Joined>())
    private static let sendable = Locked(Ring<String>())

    /// `base` joined with `path` as cached; nil when not cached.
    static func joined(_ base: String, _ path: String) -> String? {
        joined.withLock { ring in
            ring.entries.first { same($0.path, path) && same($0.base, base) }?.url
        }
    }

    /// Keeps `url`, `base` joined with `path`.
    static func keep(joined url: String, base: String, path: String) {
        joined.withLock { $0.insert(Joined(base: base, path: path, url: url)) }
    }

    /// Whether `url` was found sendable before.
    static func isKnownSendable(_ url: String) -> Bool {
        sendable.withLock { ring in ring.entries.contains { same($0, url) } }
    }

    /// Keeps `url` as one found sendable.
    static func keep(sendable url: String) {
        sendable.withLock { $0.insert(url) }
    }

    /// Byte equality, the byte count first: different paths usually differ in length, and a count is
    /// read without touching the bytes. Not `==`, which takes canonically equivalent texts as equal
    /// (`a\u{301}\u{323}` and `a\u{323}\u{301}`, the same length) though they are escaped to different bytes.
    @inline(__always)
    private static func same(_ lhs: String, _ rhs: String) -> Bool {
        lhs.hasSameUTF8(as: rhs)
    }
}
