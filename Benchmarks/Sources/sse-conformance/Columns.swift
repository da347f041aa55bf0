// What a decoder produced for one feed, and the comparison with the table's expectations.

/// One event as a decoder's API shows it (nil: the API has no value there).
struct ObservedEvent: Sendable {
    var type: String?
    var data: String?
    var id: String?
}

/// Everything a decoder reported for one feed of one case.
struct Observed: Sendable {
    var events: [ObservedEvent] = []
    /// The stream's last event ID as far as the API lets a consumer know it (nil: not compared).
    var lastEventID: String?
    /// The reconnection time in ms as far as the API lets a consumer know it (nil: none seen).
    var retryMs: Int64?
    /// A thrown error, which no case of the table expects.
    var error: String?
}

/// One column of the report: a decoder, or the reason it could not be run.
struct Column: Sendable {
    let key: String
    let title: String
    /// How this decoder's API maps onto the table (what is compared, what is derived).
    let notes: [String]
    let run: (@Sendable ([ArraySlice<UInt8>]) async -> Observed)?
    let unavailable: String?

    init(key: String, title: String, notes: [String], run: @escaping @Sendable ([ArraySlice<UInt8>]) async -> Observed) {
        self.key = key
        self.title = title
        self.notes = notes
        self.run = run
        self.unavailable = nil
    }

    init(key: String, title: String, unavailable: String, notes: [String] = []) {
        self.key = key
        self.title = title
        self.notes = notes
        self.run = nil
        self.unavailable = unavailable
    }
}

/// The differences between what was expected and what was observed (the first differing event, a
/// count mismatch, the last event ID, the reconnection time), nil when they agree.
///
/// A missing type counts as "message" (both third-party APIs document nil that way); a missing id counts
/// as "" (no last event ID). A missing data is never a match: the table never expects an event without data.
func difference(expected: ConformanceCase, observed: Observed) -> String? {
    if let error = observed.error { return "threw \(error)" }
    var found: [String] = []
    let want = expected.events, got = observed.events
    for index in 0..<min(want.count, got.count) {
        let w = want[index], g = got[index]
        var parts: [String] = []
        if (g.type ?? "message") != w.type { parts.append("type \(show(g.type)), expected \(show(w.type))") }
        if g.data != w.data { parts.append("data \(show(g.data)), expected \(show(w.data))") }
        if (g.id ?? "") != w.id { parts.append("id \(show(g.id)), expected \(show(w.id))") }
        if !parts.isEmpty {
            found.append("event \(index + 1): " + parts.joined(separator: ", "))
            break
        }
    }
    if got.count > want.count {
        let extra = got[want.count]
        let shown = "{type \(show(extra.type)), data \(show(extra.data)), id \(show(extra.id))}"
        found.append("\(events(got.count)), expected \(want.count): extra \(shown)")
    } else if got.count < want.count {
        let missing = want[got.count]
        let shown = "{type \(show(missing.type)), data \(show(missing.data))}"
        found.append("\(events(got.count)), expected \(want.count): missing \(shown)")
    }
    if let last = observed.lastEventID, let wantLast = expected.lastEventID, last != wantLast {
        found.append("last event ID \(show(last)), expected \(show(wantLast))")
    }
    if observed.retryMs != expected.retryMs {
        let seen = observed.retryMs.map { "\($0) ms" } ?? "none", wanted = expected.retryMs.map { "\($0) ms" } ?? "none"
        found.append("retry \(seen), expected \(wanted)")
    }
    return found.isEmpty ? nil : found.joined(separator: "; ")
}

private func events(_ count: Int) -> String { count == 1 ? "1 event" : "\(count) events" }

/// The verdict of one column on one case, over every feed.
struct Verdict: Codable, Sendable {
    /// "pass", "FAIL" or "n/a".
    var verdict: String
    /// The likely causes (see `diagnose`), or the first difference when none is known.
    var reason: String?
    /// The first feed's difference, as observed.
    var detail: String?
    /// Feeds that failed, out of `feeds`.
    var failedFeeds: Int
    var feeds: Int

    var cell: String {
        switch verdict {
        case "pass": return "pass"
        case "n/a": return reason ?? "n/a"
        default: return "FAIL: " + (reason ?? "")
        }
    }
}

func judge(_ testCase: ConformanceCase, bytes: [UInt8], column: Column) async -> Verdict {
    guard let run = column.run else {
        return Verdict(verdict: "n/a", reason: column.unavailable, detail: nil, failedFeeds: 0, feeds: 0)
    }
    let feeds = Feed.all(count: bytes.count)
    var failures: [(Feed, String)] = []
    for feed in feeds {
        let observed = await run(feed.chunks(of: bytes))
        if let reason = difference(expected: testCase, observed: observed) { failures.append((feed, reason)) }
    }
    guard let first = failures.first else {
        return Verdict(verdict: "pass", reason: nil, detail: nil, failedFeeds: 0, feeds: feeds.count)
    }
    let reason: String
    if case .whole = first.0 {
        let (causes, residual) = await diagnose(testCase, bytes: bytes, run: run)
        if causes.isEmpty {
            reason = first.1
        } else {
            reason = causes.joined(separator: "; ") + (residual.map { "; then: " + $0 } ?? "")
        }
    } else {
        // Whole input decodes right; name the first failing boundary and the bytes either side.
        var place = first.0.description
        if case .split(let at) = first.0 {
            place += " (\(show(bytes[max(0, at - 2)..<at]))|\(show(bytes[at..<min(bytes.count, at + 2)])))"
        }
        reason = "whole ok; \(failures.count) of \(feeds.count - 1) split feeds fail, first \(place): \(first.1)"
    }
    return Verdict(verdict: "FAIL", reason: reason, detail: first.1, failedFeeds: failures.count, feeds: feeds.count)
}

/// A short, quoted, escaped rendering of a value for a table cell.
func show(_ value: String?) -> String {
    guard let value else { return "nil" }
    var out = ""
    for scalar in value.unicodeScalars {
        switch scalar {
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0xFEFF || scalar.value == 0xFFFD:
            out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    if out.count > 40 { out = String(out.prefix(37)) + "..." }
    return "\"" + out + "\""
}

/// Bytes around a split point: printable ASCII as is, anything else as \xNN.
func show(_ bytes: ArraySlice<UInt8>) -> String {
    var out = ""
    for byte in bytes {
        switch byte {
        case 0x0A: out += "\\n"
        case 0x0D: out += "\\r"
        case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(byte))
        default: out += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }
    }
    return "\"" + out + "\""
}
