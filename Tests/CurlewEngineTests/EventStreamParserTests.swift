// Curlew — the WHATWG event-stream parser against the parsing table (Tests/Fixtures/event-stream-cases.json),
// each case whole, split at every byte boundary and one byte at a time; then its limits and its state.

import CurlewEngine
import Foundation
import Testing

/// One row of the parsing table.
private struct ParsingCase: Decodable, Sendable, CustomTestStringConvertible {
    /// An expected event (the table does not record `retry`; ``EventStreamParserTests`` checks it apart).
    struct Event: Decodable, Sendable, Equatable, CustomStringConvertible {
        var type: String
        var data: String
        var id: String
        var description: String { "(type \(type.debugDescription), data \(data.debugDescription), id \(id.debugDescription))" }
    }

    var name: String
    var rule: String
    /// The stream as text; when ``inputBase64`` is present it shows those bytes decoded (U+FFFD for invalid ones).
    var input: String
    /// The stream's exact bytes, for streams that are not valid UTF-8.
    var inputBase64: String?
    var events: [Event]
    var lastEventID: String
    var retryMs: Int?

    var testDescription: String { name }

    /// The stream's bytes.
    func bytes() throws -> [UInt8] {
        guard let base64 = inputBase64 else { return Array(input.utf8) }
        guard let data = Data(base64Encoded: base64) else { throw TableError.badBase64(name) }
        return Array(data)
    }

    /// What a parser left after this case's whole input, compared with the table.
    func check(_ outcome: Outcome, _ how: String) {
        #expect(outcome.events == events, "\(name) (\(rule)), \(how)")
        #expect(outcome.lastEventID == lastEventID, "\(name), \(how): lastEventID")
        #expect(outcome.retryMs == retryMs, "\(name), \(how): reconnectionTime")
    }
}

private enum TableError: Error {
    case badBase64(String)
}

/// The parser's events and state after a whole input.
private struct Outcome: Equatable {
    var events: [ParsingCase.Event]
    var lastEventID: String
    var retryMs: Int?
}

/// Loads the parsing table from Tests/Fixtures, beside this file's directory.
private func loadParsingCases() throws -> [ParsingCase] {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/event-stream-cases.json")
    return try JSONDecoder().decode([ParsingCase].self, from: Data(contentsOf: url))
}

/// Milliseconds of a reconnection time.
private func milliseconds(_ duration: Duration?) -> Int? {
    guard let duration else { return nil }
    let (seconds, attoseconds) = duration.components
    return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
}

/// Feeds `chunks` (ranges of `bytes`) to a new parser and returns what it produced.
private func parse(_ bytes: [UInt8], chunks: some Sequence<Range<Int>>) throws(EventStreamError) -> Outcome {
    var parser = EventStreamParser()
    var events: [ServerSentEvents.Event] = []
    for chunk in chunks { try parser.parse(bytes[chunk], into: &events) }
    parser.finish()
    return Outcome(
        events: events.map { ParsingCase.Event(type: $0.type, data: $0.data, id: $0.id) },
        lastEventID: parser.lastEventID, retryMs: milliseconds(parser.reconnectionTime))
}

/// Feeds `chunks` to `parser`, returning every event.
private func feed(_ parser: inout EventStreamParser, _ chunks: [[UInt8]]) throws(EventStreamError) -> [ServerSentEvents.Event] {
    var events: [ServerSentEvents.Event] = []
    for chunk in chunks { try parser.parse(chunk[...], into: &events) }
    return events
}

@Suite struct EventStreamParserTests {
    @Test func theTableCoversTheRulesOnce() throws {
        let cases = try loadParsingCases()
        #expect(cases.count >= 60)
        #expect(Set(cases.map(\.name)).count == cases.count, "case names are unique")
    }

    @Test(arguments: try loadParsingCases())
    fileprivate func wholeStream(_ row: ParsingCase) throws {
        let bytes = try row.bytes()
        row.check(try parse(bytes, chunks: [0..<bytes.count]), "whole")
    }

    @Test(arguments: try loadParsingCases())
    fileprivate func splitAtEveryByteBoundary(_ row: ParsingCase) throws {
        let bytes = try row.bytes()
        for split in 0...bytes.count {
            row.check(try parse(bytes, chunks: [0..<split, split..<bytes.count]), "split at byte \(split)")
        }
    }

    @Test(arguments: try loadParsingCases())
    fileprivate func oneByteAtATime(_ row: ParsingCase) throws {
        let bytes = try row.bytes()
        row.check(try parse(bytes, chunks: (0..<bytes.count).map { $0..<($0 + 1) }), "one byte at a time")
    }

    /// The convenience that takes any collection (contiguous or not) parses as the slice form does.
    @Test(arguments: try loadParsingCases())
    fileprivate func anyCollection(_ row: ParsingCase) throws {
        let bytes = try row.bytes()
        var contiguous = EventStreamParser()
        var noncontiguous = EventStreamParser()
        let fromArray = try contiguous.parse(bytes)
        let fromMap = try noncontiguous.parse(bytes.lazy.map { $0 })
        #expect(fromArray == fromMap)
        #expect(fromArray.map { ParsingCase.Event(type: $0.type, data: $0.data, id: $0.id) } == row.events)
        #expect(contiguous.lastEventID == row.lastEventID && noncontiguous.lastEventID == row.lastEventID)
    }

    // MARK: - Limits

    @Test func theDefaultLimits() {
        #expect(EventStreamParser.defaultMaxLineLength == 1_048_576)
        #expect(EventStreamParser.defaultMaxEventSize == 16_777_216)
        #expect(EventStreamParser.maximumReconnectionTime == .seconds(86_400))
        #expect(EventStreamError.lineTooLong(limit: 1_048_576).description == "an event-stream line is longer than 1048576 bytes")
    }

    @Test func aLineOfExactlyTheDefaultLimitPassesAndOneByteMoreThrows() throws {
        let value = [UInt8](repeating: 0x61, count: EventStreamParser.defaultMaxLineLength - 7)
        var parser = EventStreamParser()
        let events = try feed(&parser, [Array("event: ".utf8) + value + Array("\ndata: x\n\n".utf8)])
        #expect(events == [ServerSentEvents.Event(type: String(decoding: value, as: UTF8.self), data: "x")])

        var longer = EventStreamParser()
        #expect(throws: EventStreamError.lineTooLong(limit: EventStreamParser.defaultMaxLineLength)) {
            try feed(&longer, [Array("event: ".utf8) + value + [0x61, 0x0A, 0x0A]])
        }
    }

    /// LaunchDarkly's largest payload: `data: ` and 1 MiB in one line passes the default limits (the line
    /// limit does not apply to `data` lines; before, it failed `lineTooLong(limit: 1048576)`).
    @Test func aOneMebibyteDataLinePassesTheDefaultLimits() throws {
        let value = [UInt8](repeating: 0x61, count: 1 << 20)
        for size in [4096, 1 << 20 + 8] {
            var parser = EventStreamParser()
            let stream = Array("data: ".utf8) + value + [0x0A, 0x0A]
            let events = try feed(&parser, stride(from: 0, to: stream.count, by: size).map { Array(stream[$0..<min(stream.count, $0 + size)]) })
            #expect(events.map(\.data.utf8.count) == [1 << 20], "chunks of \(size)")
        }
    }

    /// A `data` line is bounded by the event's data limit: one that has not ended throws
    /// `eventTooLarge` as soon as its value is longer than the limit, whatever the line limit.
    @Test func aDataLineIsBoundedByTheEventSize() throws {
        var parser = EventStreamParser(maxLineLength: 8, maxEventSize: 20)
        #expect(try feed(&parser, [Array("data: 01234567890123456789".utf8)]).isEmpty)
        #expect(throws: EventStreamError.eventTooLarge(limit: 20)) { try feed(&parser, [[0x37]]) }
        // Data already in the event counts: 12 bytes then 1 + 8 fit, 1 + 9 do not.
        var joined = EventStreamParser(maxLineLength: 8, maxEventSize: 21)
        #expect(try feed(&joined, [Array("data: 012345678901\ndata: abcdefgh\n\n".utf8)]).map(\.data) == ["012345678901\nabcdefgh"])
        #expect(throws: EventStreamError.eventTooLarge(limit: 21)) {
            try feed(&joined, [Array("data: 012345678901\ndata: abcdefghi".utf8)])
        }
    }

    /// Lines of exactly the limit pass and one byte more throws, whatever the line end and wherever the
    /// chunks split; the terminator is not counted, and a line that never ends throws once it is too long.
    @Test(arguments: ["\n", "\r", "\r\n"])
    func lineLengthLimitAtEverySplit(terminator: String) throws {
        let limit = 16
        let t = terminator
        let exact = Array("id: 0123456789ab\(t)data: x\(t)\(t)".utf8)  // "id: 0123456789ab" is 16 bytes
        let over = Array("id: 0123456789abc\(t)data: x\(t)\(t)".utf8)
        for split in 0...exact.count {
            var parser = EventStreamParser(maxLineLength: limit)
            let events = try feed(&parser, [Array(exact[..<split]), Array(exact[split...])])
            #expect(events == [ServerSentEvents.Event(data: "x", id: "0123456789ab")], "split at \(split)")
        }
        for split in 0...over.count {
            var parser = EventStreamParser(maxLineLength: limit)
            #expect(throws: EventStreamError.lineTooLong(limit: limit), "split at \(split)") {
                try feed(&parser, [Array(over[..<split]), Array(over[split...])])
            }
        }
        // A line that has not ended yet throws as soon as it is longer than the limit.
        var parser = EventStreamParser(maxLineLength: limit)
        #expect(try feed(&parser, [Array(": 34567890123456".utf8)]).isEmpty)
        #expect(throws: EventStreamError.lineTooLong(limit: limit)) { try feed(&parser, [[0x37]]) }
    }

    @Test func aCommentLineIsLimitedToo() {
        var parser = EventStreamParser(maxLineLength: 8)
        #expect(throws: EventStreamError.lineTooLong(limit: 8)) { try feed(&parser, [Array(":123456789\n".utf8)]) }
    }

    @Test func afterThrowingTheParserRefusesBytesUntilFinish() throws {
        var parser = EventStreamParser(maxLineLength: 8)
        var events: [ServerSentEvents.Event] = []
        #expect(throws: EventStreamError.lineTooLong(limit: 8)) {
            try parser.parse(Array("data: a\n\nevent: 123456789\n\n".utf8)[...], into: &events)
        }
        #expect(events == [ServerSentEvents.Event(data: "a")], "events before the long line are appended")
        #expect(throws: EventStreamError.lineTooLong(limit: 8), "the same error until finish()") {
            try parser.parse(Array("data: b\n\n".utf8)[...], into: &events)
        }
        parser.finish()
        #expect(try feed(&parser, [Array("data: c\n\n".utf8)]) == [ServerSentEvents.Event(data: "c")])
    }

    @Test func eventSizeLimitCountsTheJoinedData() throws {
        let limit = 10
        var parser = EventStreamParser(maxEventSize: limit)
        // "0123456789" and "01234\n6789" are 10 bytes of data.
        let events = try feed(&parser, [Array("data: 0123456789\n\ndata: 01234\ndata: 6789\n\n".utf8)])
        #expect(events.map(\.data) == ["0123456789", "01234\n6789"])

        let over = Array("data: 01234\ndata: 67890\n\n".utf8)
        for split in 0...over.count {
            var parser = EventStreamParser(maxEventSize: limit)
            #expect(throws: EventStreamError.eventTooLarge(limit: limit), "split at \(split)") {
                try feed(&parser, [Array(over[..<split]), Array(over[split...])])
            }
        }
        // Empty data lines count their LF.
        var empty = EventStreamParser(maxEventSize: 3)
        #expect(throws: EventStreamError.eventTooLarge(limit: 3)) { try feed(&empty, [Array("data\ndata\ndata\ndata\ndata\n".utf8)]) }
    }

    // MARK: - State

    @Test func finishDiscardsTheIncompleteEventAndStartsANewStream() throws {
        var parser = EventStreamParser()
        #expect(try feed(&parser, [Array("\u{FEFF}id: 7\nretry: 300\ndata: x\n\ndata: partial\nid: 8\nevent: t\n".utf8)])
            == [ServerSentEvents.Event(data: "x", id: "7", retry: .milliseconds(300))])
        parser.finish()
        #expect(parser.lastEventID == "7", "the incomplete block's id went with it")
        #expect(parser.reconnectionTime == .milliseconds(300))
        // The next bytes are a new stream: its BOM is stripped again (here split across chunks), and
        // nothing of the discarded block (data, type, id) survives.
        let events = try feed(&parser, [[0xEF], [0xBB], [0xBF], Array("data: y\n\n".utf8)])
        #expect(events == [ServerSentEvents.Event(data: "y", id: "7")])
    }

    @Test func finishForgetsAPartialLineAndAPendingCR() throws {
        var parser = EventStreamParser()
        #expect(try feed(&parser, [Array("data: a\n\ndata: b\r".utf8)]) == [ServerSentEvents.Event(data: "a")])
        parser.finish()
        // A partial line: its bytes do not join the next stream's first line.
        #expect(try feed(&parser, [Array("data: c".utf8)]).isEmpty)
        parser.finish()
        #expect(try feed(&parser, [Array("\u{FEFF}\u{FEFF}data: d\n\ndata: e\n\n".utf8)]) == [ServerSentEvents.Event(data: "e")])
    }

    @Test func lastEventIDIsSettableToResume() throws {
        var parser = EventStreamParser()
        parser.lastEventID = "resume-5"
        #expect(try feed(&parser, [Array("data: a\n\nid: 6\ndata: b\n\n".utf8)])
            == [ServerSentEvents.Event(data: "a", id: "resume-5"), ServerSentEvents.Event(data: "b", id: "6")])
        #expect(parser.lastEventID == "6")
        parser.lastEventID = ""
        #expect(try feed(&parser, [Array("data: c\n\n".utf8)]) == [ServerSentEvents.Event(data: "c")])
    }

    @Test func anIdOnlyBlockUpdatesLastEventIDAtItsEmptyLine() throws {
        var parser = EventStreamParser()
        #expect(try feed(&parser, [Array("id: 42\n".utf8)]).isEmpty)
        #expect(parser.lastEventID == "", "set by the block's empty line, as the specification's dispatch does")
        #expect(try feed(&parser, [Array("\n".utf8)]).isEmpty)
        #expect(parser.lastEventID == "42")
    }

    @Test func retryIsRecordedOnTheEventOfItsBlock() throws {
        var parser = EventStreamParser()
        let events = try feed(&parser, [
            Array("retry: 1500\ndata: x\n\ndata: y\n\nretry: 10\n\ndata: z\n\nretry: 5x\ndata: w\n\nretry: 99999999999\nretry: 7\n".utf8),
            Array("data: v\n\nretry: 123456789012\ndata: u\n\n".utf8),
        ])
        #expect(events.map(\.data) == ["x", "y", "z", "w", "v", "u"])
        #expect(events.map(\.retry) == [.milliseconds(1500), nil, nil, nil, .milliseconds(7), EventStreamParser.maximumReconnectionTime])
        #expect(parser.reconnectionTime == .seconds(86_400))
    }

    @Test func aOneMebibyteEventRoundTrips() throws {
        // One 1 MiB data line (the default limits), with multi-byte characters cut by the chunks.
        let value = String(repeating: "é€x", count: (1 << 20) / 6)  // 2 + 3 + 1 bytes each
        let line = Array("id: big\ndata: \(value)\n\n".utf8)
        for size in [1 << 16, 1000, line.count] {
            var parser = EventStreamParser()
            let chunks = stride(from: 0, to: line.count, by: size).map { Array(line[$0..<min(line.count, $0 + size)]) }
            let events = try feed(&parser, chunks)
            #expect(events.count == 1 && events.first?.data == value && events.first?.id == "big", "chunks of \(size)")
        }
        // 1 MiB in 16 lines of 64 KiB with the default limits: joined with LF.
        let part = String(repeating: "0123456789abcdef", count: 4096)
        let stream = Array(String(repeating: "data: \(part)\n", count: 16).appending("\n").utf8)
        var parser = EventStreamParser()
        let events = try feed(&parser, stride(from: 0, to: stream.count, by: 4000).map { Array(stream[$0..<min(stream.count, $0 + 4000)]) })
        #expect(events.count == 1 && events.first?.data == Array(repeating: part, count: 16).joined(separator: "\n"))
    }
}
