// Names the likely causes of a failure: the smallest set of known departures from the specification
// that, undone, brings a decoder's result closest to the table's. Input-side ones rewrite the bytes in
// a way the specification treats as equivalent and run the decoder again; output-side ones apply a fix a
// consumer could make to what the decoder yielded. What the corrections cannot explain is shown after
// "then:". The verdict itself never depends on this.

private struct InputCorrection: Sendable {
    let name: String
    /// The equivalent input, or nil when the correction does not apply to this input.
    let rewrite: @Sendable ([UInt8]) -> [UInt8]?
}

private struct OutputCorrection: Sendable {
    let name: String
    let apply: @Sendable (Observed) -> Observed
}

private let inputCorrections = [
    // A stream starting with one BOM means the same as the stream without it.
    InputCorrection(name: "BOM not stripped") { bytes in
        bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : nil
    },
    // A non-empty line without a colon is the field named by the whole line with an empty value: the
    // same as the line followed by a colon.
    InputCorrection(name: "line without colon ignored") { bytes in
        rewritingLines(bytes) { line in line.isEmpty || line.contains(colon) ? line : line + [colon] }
    },
    // An `id` whose value contains U+0000 is ignored: the same as no such line.
    InputCorrection(name: "id with NUL accepted") { bytes in
        rewritingLines(bytes) { line in
            guard let (name, value) = field(line), name == Array("id".utf8), value.contains(0) else { return line }
            return nil
        }
    },
    // A `retry` whose value is not all ASCII digits (or is empty) is ignored: the same as no such line.
    InputCorrection(name: "invalid retry accepted") { bytes in
        rewritingLines(bytes) { line in
            guard let (name, value) = field(line), name == Array("retry".utf8) else { return line }
            return !value.isEmpty && value.allSatisfy({ (0x30...0x39).contains($0) }) ? line : nil
        }
    },
    // Not the specification's rule but Curlew's (the specification sets no limit): a valid `retry` over
    // 24 h counts as 86400000 ms.
    InputCorrection(name: "retry over 24 h not clamped (Curlew's limit)") { bytes in
        rewritingLines(bytes) { line in
            guard let (name, value) = field(line), name == Array("retry".utf8), !value.isEmpty,
                value.allSatisfy({ (0x30...0x39).contains($0) })
            else { return line }
            let digits = value.drop { $0 == 0x30 }
            let overLimit = digits.count > 8 || (Int(String(decoding: digits, as: UTF8.self)) ?? 0) > 86_400_000
            return overLimit ? Array("retry:86400000".utf8) : line
        }
    },
]

private let colon: UInt8 = 0x3A

/// A line's field name and value (one leading space removed), nil for a comment or an empty line.
private func field(_ line: [UInt8]) -> ([UInt8], [UInt8])? {
    guard let first = line.first, first != colon else { return nil }
    guard let index = line.firstIndex(of: colon) else { return (line, []) }
    var value = line[(index + 1)...]
    if value.first == 0x20 { value = value.dropFirst() }
    return (Array(line[..<index]), Array(value))
}

/// The stream with each terminated line replaced by `transform`'s result (nil: the line and its
/// terminator removed); nil when nothing changed. An unterminated last line is never parsed, so it stays.
private func rewritingLines(_ bytes: [UInt8], _ transform: ([UInt8]) -> [UInt8]?) -> [UInt8]? {
    var out: [UInt8] = []
    var line: [UInt8] = []
    var changed = false
    var index = 0
    while index < bytes.count {
        let byte = bytes[index]
        if byte == 0x0A || byte == 0x0D {
            var terminator = [byte]
            if byte == 0x0D, index + 1 < bytes.count, bytes[index + 1] == 0x0A {
                terminator.append(0x0A)
                index += 1
            }
            if let replacement = transform(line) {
                if replacement != line { changed = true }
                out += replacement + terminator
            } else {
                changed = true
            }
            line.removeAll()
        } else {
            line.append(byte)
        }
        index += 1
    }
    out += line
    return changed ? out : nil
}

private let outputCorrections = [
    OutputCorrection(name: "id not carried forward") { observed in
        var result = observed
        var last: String?
        for index in result.events.indices {
            if let id = result.events[index].id { last = id } else { result.events[index].id = last }
        }
        return result
    },
    OutputCorrection(name: "empty event type not \"message\"") { observed in
        var result = observed
        for index in result.events.indices where result.events[index].type == "" { result.events[index].type = nil }
        return result
    },
    OutputCorrection(name: "dispatches blocks without data") { observed in
        var result = observed
        result.events.removeAll { $0.data == nil }
        return result
    },
]

/// How far an observation is from the expectation: differing event fields, missing or extra events,
/// a differing last event ID, a differing reconnection time.
private func distance(expected: ConformanceCase, observed: Observed) -> Int {
    if observed.error != nil { return Int.max / 2 }
    let want = expected.events, got = observed.events
    var score = abs(want.count - got.count)
    for index in 0..<min(want.count, got.count) {
        if (got[index].type ?? "message") != want[index].type { score += 1 }
        if got[index].data != want[index].data { score += 1 }
        if (got[index].id ?? "") != want[index].id { score += 1 }
    }
    if let last = observed.lastEventID, let wantLast = expected.lastEventID, last != wantLast { score += 1 }
    if observed.retryMs != expected.retryMs { score += 1 }
    return score
}

/// The likely causes of the whole input's failure, and what they leave unexplained.
func diagnose(
    _ testCase: ConformanceCase, bytes: [UInt8], run: @Sendable ([ArraySlice<UInt8>]) async -> Observed
) async -> (causes: [String], residual: String?) {
    var best: (score: Int, size: Int, causes: [String], observed: Observed)?
    for inputMask in 0..<(1 << inputCorrections.count) {
        var input = bytes
        var inputCauses: [String] = []
        var applies = true
        for (bit, correction) in inputCorrections.enumerated() where inputMask & (1 << bit) != 0 {
            guard let rewritten = correction.rewrite(input) else {
                applies = false
                break
            }
            input = rewritten
            inputCauses.append(correction.name)
        }
        guard applies else { continue }
        let observed = await run([input[...]])
        for outputMask in 0..<(1 << outputCorrections.count) {
            var corrected = observed
            var causes = inputCauses
            for (bit, correction) in outputCorrections.enumerated() where outputMask & (1 << bit) != 0 {
                corrected = correction.apply(corrected)
                causes.append(correction.name)
            }
            let score = distance(expected: testCase, observed: corrected)
            if let current = best, (current.score, current.size) <= (score, causes.count) { continue }
            best = (score, causes.count, causes, corrected)
        }
    }
    guard let best else { return ([], nil) }
    return (best.causes, difference(expected: testCase, observed: best.observed))
}
