// Fuzz target: the server-sent-events parser.
//
// Oracles:
// 1. The same events, last event ID and reconnection time whatever the chunk boundaries: the stream is
//    parsed whole, then again in chunks whose sizes come from the input's first bytes.
// 2. The same as a literal transcription of the WHATWG algorithm (HTML "Parsing an event stream" and
//    "Interpreting an event stream") below, written for clarity, not speed.
// 3. With small limits, a typed error and never a crash.

import FuzzSupport

@testable import CurlewEngine

/// The entry point SwiftPM links as `main` (see `runFuzzer`).
@_cdecl("FuzzEventStream_main")
public func fuzzEventStreamMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzEventStream)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEventStream(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 2 else { return 0 }
    // The first two bytes choose the chunk sizes; the rest is the stream.
    let seed = Int(input[0]) | Int(input[1]) << 8
    let stream = Array(input[2...])

    var whole = EventStreamParser(maxLineLength: 1 << 20, maxEventSize: 1 << 20)
    let wholeEvents = (try? whole.parse(stream[...])) ?? []

    var chunked = EventStreamParser(maxLineLength: 1 << 20, maxEventSize: 1 << 20)
    var chunkedEvents: [ServerSentEvents.Event] = []
    var offset = 0
    var state = UInt32(truncatingIfNeeded: seed) | 1
    while offset < stream.count {
        state = state &* 1_103_515_245 &+ 12_345
        let length = min(stream.count - offset, Int(state >> 16) % 7 + 1)
        do {
            try chunked.parse(stream[offset..<(offset + length)], into: &chunkedEvents)
        } catch {
            expectationFailed("a limit of 1 MiB was reached by a stream of \(stream.count) bytes")
        }
        offset += length
    }
    expect(same(wholeEvents, chunkedEvents), "chunk boundaries changed the events")
    expect(whole.lastEventID == chunked.lastEventID)
    expect(whole.reconnectionTime == chunked.reconnectionTime)

    var reference = WHATWGReference()
    reference.parse(stream)
    expect(same(wholeEvents, reference.events), "differs from the WHATWG algorithm: \(describe(wholeEvents)) against \(describe(reference.events))")
    expect(whole.lastEventID == reference.lastEventID)
    expect(whole.reconnectionTime == reference.reconnectionTime.map { .milliseconds($0) })

    var small = EventStreamParser(maxLineLength: 16, maxEventSize: 32)
    do {
        _ = try small.parse(stream[...])
    } catch {
        switch error {
        case .lineTooLong(let limit): expect(limit == 16)
        case .eventTooLarge(let limit): expect(limit == 32)
        default: expectationFailed("unexpected error \(error)")
        }
    }
    return 0
}

private func describe(_ events: [ServerSentEvents.Event]) -> String {
    events.map { "(\($0.type.debugDescription), \($0.data.debugDescription), \($0.id.debugDescription))" }.joined(separator: " ")
}

private func same(_ a: [ServerSentEvents.Event], _ b: [ServerSentEvents.Event]) -> Bool {
    // By their bytes: `==` on Strings would call canonically equivalent texts the same.
    a.count == b.count
        && zip(a, b).allSatisfy {
            Array($0.type.utf8) == Array($1.type.utf8) && Array($0.data.utf8) == Array($1.data.utf8)
                && Array($0.id.utf8) == Array($1.id.utf8)
        }
}

/// The specification's steps, one byte at a time.
private struct WHATWGReference {
    var events: [ServerSentEvents.Event] = []
    var lastEventID = ""
    var reconnectionTime: Int?
    /// Curlew's documented clamp (24 hours), which the specification leaves to the user agent.
    private let clamp = 86_400_000
    private var dataBuffer = ""
    private var eventTypeBuffer = ""
    private var lastEventIDBuffer = ""

    mutating func parse(_ stream: [UInt8]) {
        var bytes = stream[...]
        // "One leading U+FEFF BYTE ORDER MARK character must be ignored if any are present."
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        var line: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == 0x0D || byte == 0x0A {
                process(String(decoding: line, as: UTF8.self))
                line.removeAll()
                // CRLF is one line end.
                if byte == 0x0D, bytes.index(after: index) < bytes.endIndex, bytes[bytes.index(after: index)] == 0x0A {
                    index = bytes.index(after: index)
                }
            } else {
                line.append(byte)
            }
            index = bytes.index(after: index)
        }
        // "Once the end of the file is reached, any pending data must be discarded."
    }

    // On Unicode scalars, as the specification reads: a `:` followed by a combining mark is one Swift
    // `Character`, and still the field's end.
    private mutating func process(_ line: String) {
        let scalars = line.unicodeScalars
        if scalars.isEmpty { return dispatch() }
        if scalars.first == ":" { return }
        if let colon = scalars.firstIndex(of: ":") {
            var value = scalars[scalars.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
            field(String(scalars[..<colon]), String(value))
        } else {
            field(line, "")
        }
    }

    private mutating func field(_ name: String, _ value: String) {
        switch name {
        case "event": eventTypeBuffer = value
        case "data": dataBuffer += value + "\n"
        case "id": if !value.unicodeScalars.contains("\u{0}") { lastEventIDBuffer = value }
        case "retry":
            if !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
                reconnectionTime = Int(value).map { min($0, clamp) } ?? clamp
            }
        default: break
        }
    }

    private mutating func dispatch() {
        lastEventID = lastEventIDBuffer
        guard !dataBuffer.isEmpty else {
            eventTypeBuffer = ""
            return
        }
        if dataBuffer.unicodeScalars.last == "\n" { dataBuffer.unicodeScalars.removeLast() }
        events.append(ServerSentEvents.Event(type: eventTypeBuffer.isEmpty ? "message" : eventTypeBuffer, data: dataBuffer, id: lastEventID))
        dataBuffer = ""
        eventTypeBuffer = ""
    }
}
